"""`flightdeck ui`: a local web view of runs, approvals, audit, plans and sessions.

    from flightdeck.ui import UiConfig, create_app, serve
    app = create_app(UiConfig(data=data_dir()))      # a Starlette app
    serve(UiConfig(data=data_dir()), port=0)          # uvicorn on 127.0.0.1

The stores are opened read-only; the one write is an approval decision,
which needs the per-start token and the page's CSRF token and is carried out
by resuming the run (`flightdeck launch --resume`). Starlette, Jinja2 and
uvicorn are imported only here, so only the `ui` command pays for them.
"""

from __future__ import annotations

from flightdeck.ui._app import UiConfig, create_app
from flightdeck.ui._errors import UiError
from flightdeck.ui._security import Secrets
from flightdeck.ui._serve import serve

__all__ = ["Secrets", "UiConfig", "UiError", "create_app", "serve"]
