"""Drawn pictures of board positions, for the HTML part of the mails: `draw` in
pbm.pictures.picture. Importing this package runs nothing."""
