from compactctl.cli.main import main

main()
