from specdec_guide.cli import main

raise SystemExit(main())
