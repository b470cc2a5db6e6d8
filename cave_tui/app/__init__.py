"""The application layer every front end shares: services, start-up, commands, config.

Headless: it imports the core (agent, runtime, session, dataio, …) and never a front end,
typer or Textual. Front ends (`cave_tui.frontends.*`) send it requests; the core streams
typed events back.
"""
