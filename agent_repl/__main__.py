from agent_repl.entry import main

raise SystemExit(main())
