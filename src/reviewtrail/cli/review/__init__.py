"""Human review commands: ``reviewtrail review`` (the queue, decisions, the keyboard session and
its drawing and input), ``reviewtrail campaign`` (campaigns, their runs, items and outputs), and
``reviewtrail claims | evidence``."""
