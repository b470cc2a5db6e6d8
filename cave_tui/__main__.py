from cave_tui.frontends.cli import main

main()
