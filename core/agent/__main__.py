import sys

from .agent_main import main

sys.exit(main())
