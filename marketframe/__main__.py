import sys

from marketframe.cli import main

sys.exit(main())
