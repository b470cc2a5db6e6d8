from cave_tui.cli import main

main()
