from reviewtrail.cli import main

main()
