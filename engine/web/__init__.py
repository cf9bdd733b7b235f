"""The world in a browser: ``mudsim serve WORLD --web PORT``.

A ``WebServer`` (``engine.web.server``) listens beside the telnet server, on the same
asyncio loop and for the same ``MudServer``: it serves one small page (``static/``,
hand-written HTML, JS and CSS, nothing fetched from elsewhere) over plain HTTP GET, and
a websocket at ``/ws`` where the page logs in and plays. Each websocket is a
``WebClient`` (``engine.web.client``), the telnet ``Client`` protocol carried as JSON
messages (``engine.web.messages``), so the login dialogue, the session, the accounts
and every limit are telnet's own.
"""
