from flightdeck.cli import main

main()
