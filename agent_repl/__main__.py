from agent_repl.cli import main

raise SystemExit(main())
