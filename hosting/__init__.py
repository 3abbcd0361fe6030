"""The server around the app: what `streamlit run app.py` sets up once per process, before the first student.

app.py holds an ``st.App`` (Streamlit's ASGI application) built from the two things here:

* ``lifespan``: at start-up, the heavy imports begin in the background (``hosting.warm``), Streamlit's
  old ``pages/``-folder mode is switched off for the process, so even the first deep link on a fresh server
  runs through app.py, the janitor starts giving back what departed sessions held and the collector the runs'
  garbage, once a second (``hosting.janitor``), every connection the server accepts sends small writes at
  once (``hosting.internals.install_nodelay``), and a script run's messages reach the event loop a burst at a
  time, not one wakeup each (``hosting.internals.install_batched_events``);
* ``MIDDLEWARE``: what the app's browser code fetches, named by content (``hosting.published``), the frontend's
  files gzipped, each once (``hosting.compress``), guards in front of Streamlit's own routes (``hosting.guard``),
  and the browser's voter cookie for the class poll (``hosting.classpoll.VoterCookie``).

Nothing here runs inside a student's script run except ``hosting.warm.script_run()``, around it.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.middleware import Middleware

from hosting import internals, warm
from hosting.classpoll import VoterCookie
from hosting.compress import Compress
from hosting.guard import Guard
from hosting.janitor import Collector, Janitor, tune_allocator
from hosting.published import Published

MIDDLEWARE = [Middleware(Published), Middleware(Compress), Middleware(Guard), Middleware(VoterCookie)]


@contextlib.asynccontextmanager
async def lifespan(app):
    """Start-up: begin the heavy imports; leave the pages/ folder's legacy mode before any session starts."""
    # A folder named pages/ beside app.py makes Streamlit run deep links without app.py until some session
    # has called st.navigation (see draw/frame.py); app.py always calls it, so say so from the start.
    internals.leave_pages_directory_mode()
    internals.install_nodelay()
    internals.install_batched_events()
    tune_allocator()
    warm.start()
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(Janitor().run()), loop.create_task(Collector().run())]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
