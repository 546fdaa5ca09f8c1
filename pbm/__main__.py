from pbm.cli import main

main()
