from specdec_guide.validate.command import main

raise SystemExit(main())
