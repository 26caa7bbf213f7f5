from cerebro.cli.app import main

main()
