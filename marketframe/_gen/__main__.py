from marketframe._gen.docs import main

raise SystemExit(main())
