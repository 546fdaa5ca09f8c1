"""pbm on the web (docs/web.md): the pages, feeds, one-click links and metrics that
pbm.web.server serves. Importing this package runs nothing."""
