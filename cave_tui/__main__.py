from cave_tui.frontends.cli.main import main

main()
