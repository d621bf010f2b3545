"""The Starlette application: routes render templates from the readers.

Every page is also an htmx fragment: a request with `HX-Request` gets the
part of the page it asked to refresh. The one write endpoint is the
approval decision, behind the token (`_security.Guard`) and the CSRF field.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from flightdeck.audit import (
    AuditQuery,
    AuditQueryError,
    AuditSink,
    SQLiteAuditSink,
    parse_time,
    parse_where,
)
from flightdeck.flightplan import SkillStore, TrustState
from flightdeck.ui._data import FINISHED, Reader, RunFilter
from flightdeck.ui._errors import UiError
from flightdeck.ui._graph import step_graph_svg
from flightdeck.ui._security import LOOPBACK, Guard, Secrets
from flightdeck.ui._sources import plan_at, plans, sessions, transcript, versions
from flightdeck.ui._steer import Steering

HERE = Path(__file__).parent
AUDIT_PAGE = 500


@dataclass
class UiConfig:
    data: Path  # flightdeck.config.data_dir()
    workspace: Path | None = None  # passed to resumed launches
    bound: str = "127.0.0.1"
    secrets: Secrets = field(default_factory=Secrets)
    poll_seconds: float = 0.5
    stream_seconds: float = 300.0  # an event stream ends after this; the browser reconnects
    extra_hosts: tuple[str, ...] = ()
    store_url: str | None = None  # the PostgreSQL store, when one is configured

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({*LOOPBACK, self.bound, *self.extra_hosts})


def _pretty(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "\n… (cut)"


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
    )
    env.filters["pretty"] = _pretty
    return Jinja2Templates(env=env)


class Pages:
    def __init__(self, config: UiConfig) -> None:
        self.config = config
        url = config.store_url
        self.reader = Reader(config.data / "runs.sqlite3", config.data / "audit.sqlite3", url)
        audit: AuditSink = SQLiteAuditSink(config.data / "audit.sqlite3")
        if url is not None:
            from flightdeck.audit import PostgresAuditSink

            audit = PostgresAuditSink(url)
        self.store = SkillStore(config.data / "skills")
        self.trust = TrustState(config.data / "trust.json") if url is None else TrustState(url=url)
        self.steering = Steering(
            self.reader,
            audit,
            config.data / "ui",
            config.workspace,
        )
        self.templates = _templates()

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("flash", None)
        context["csrf"] = self.config.secrets.csrf
        context["fragment"] = request.headers.get("hx-request") == "true"
        return self.templates.TemplateResponse(request, name, context, status_code=status)

    # runs -------------------------------------------------------------------
    async def runs(self, request: Request) -> Response:
        params = request.query_params
        try:
            page_no = int(params.get("page", "0"))
        except ValueError:
            page_no = 0
        query = RunFilter(params.get("status") or None, params.get("q") or None, page_no)
        page = await run_in_threadpool(self.reader.runs, query)
        labels = await run_in_threadpool(versions, self.store)
        for run in page.runs:
            run["version"] = labels.get(run["content_hash"] or "")
        statuses = await run_in_threadpool(self.reader.statuses)
        return self.render(
            request, "runs.html", page=page, query=query, statuses=statuses, nav="runs"
        )

    async def run(self, request: Request) -> Response:
        return await self._run(request, "run.html")

    async def run_body(self, request: Request) -> Response:
        return await self._run(request, "run_body.html")

    async def _run(
        self, request: Request, template: str, flash: str | None = None, status: int = 200
    ) -> Response:
        run_id = request.path_params["run_id"]
        run = await run_in_threadpool(self.reader.run, run_id)
        if run is None:
            raise UiError("runs.unknown", f"no run {run_id}")
        records, _ = await run_in_threadpool(self.reader.records, AuditQuery(run_id=run_id))
        by_step: dict[str, list[Any]] = {}
        for record in records:
            step = record.fields.get("step") or record.fields.get("stepId")
            by_step.setdefault(str(step) if step else "", []).append(record.to_dict())
        plan = await run_in_threadpool(plan_at, run["plan_path"])
        graph = (
            step_graph_svg(plan, {s["id"]: s["status"] for s in run["steps"]})
            if plan is not None
            else None
        )
        return self.render(
            request,
            template,
            status=status,
            run=run,
            audit=by_step,
            graph=graph,
            live=run["status"] not in FINISHED,
            resuming=self.steering.resuming(run_id),
            flash=flash,
            nav="runs",
        )

    async def decide(self, request: Request) -> Response:
        form = await request.form()
        if not self.config.secrets.csrf_ok(str(form.get("csrf", ""))):
            return Response("refused: missing or wrong CSRF token [ui.csrf]", 403)
        run_id = request.path_params["run_id"]
        step_id = request.path_params["step_id"]
        decision = str(form.get("decision", ""))
        flash, status = None, 200
        try:
            await run_in_threadpool(self.steering.decide, run_id, step_id, decision)
            done = {"approve": "approved", "deny": "denied"}[decision]
            flash = f"{done} {step_id}; the run is resuming"
        except UiError as exc:
            if exc.code == "runs.unknown":
                raise
            flash, status = f"{exc.message} [{exc.code}]", 409
        if request.headers.get("hx-request") != "true":
            if status != 200:
                return Response(flash or "", status, media_type="text/plain")
            return RedirectResponse(f"/runs/{run_id}", status_code=303)
        return await self._run(request, "run_body.html", flash=flash, status=status)

    async def events(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if not await run_in_threadpool(self.reader.fingerprint, run_id):
            raise UiError("runs.unknown", f"no run {run_id}")
        loop = asyncio.get_running_loop()

        async def stream() -> AsyncIterator[str]:
            last: str | None = None
            ends = loop.time() + self.config.stream_seconds
            yield "retry: 1000\n\n"
            while loop.time() < ends and not await request.is_disconnected():
                now = await run_in_threadpool(self.reader.fingerprint, run_id)
                if now != last:
                    last = now
                    yield "event: change\ndata: {}\n\n"
                await asyncio.sleep(self.config.poll_seconds)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    # audit ------------------------------------------------------------------
    def _audit_query(self, request: Request) -> tuple[AuditQuery, str | None, dict[str, str]]:
        params = request.query_params
        form = {k: params.get(k, "") for k in ("run", "kind", "action", "since", "until", "q")}
        form["where"] = params.get("where", "")
        form["effect"] = params.get("effect", "")
        form["decision"] = params.get("decision", "")
        where = parse_where(p.strip() for p in form["where"].split(",") if p.strip())
        for name in ("effect", "decision"):
            if form[name]:
                where[name] = form[name]
        query = AuditQuery(
            run_id=form["run"] or None,
            kinds=tuple(k.strip() for k in form["kind"].split(",") if k.strip()),
            action=form["action"] or None,
            since=parse_time(form["since"]) if form["since"] else None,
            until=parse_time(form["until"]) if form["until"] else None,
            where=where,
        )
        return query, form["q"] or None, form

    async def audit(self, request: Request) -> Response:
        try:
            query, text, form = self._audit_query(request)
        except AuditQueryError as exc:
            raise UiError(exc.code, exc.message, exc.hint) from None
        records, more = await run_in_threadpool(self.reader.records, query, text, AUDIT_PAGE)
        shown = [r.to_dict() for r in records][::-1]  # newest first
        export = "/audit.json?" + str(request.query_params) if request.query_params else ""
        return self.render(
            request,
            "audit.html",
            records=shown,
            more=more,
            form=form,
            export=export or "/audit.json",
            nav="audit",
        )

    async def audit_json(self, request: Request) -> Response:
        try:
            query, text, _ = self._audit_query(request)
        except AuditQueryError as exc:
            return JSONResponse({"error": exc.to_dict()}, 400)
        records, _ = await run_in_threadpool(self.reader.records, query, text)
        return JSONResponse(
            [r.to_dict() for r in records],
            headers={"Content-Disposition": 'attachment; filename="audit.json"'},
        )

    # plans and sessions -----------------------------------------------------
    async def plans(self, request: Request) -> Response:
        rows = await run_in_threadpool(plans, self.store, self.trust)
        return self.render(request, "plans.html", plans=rows, nav="plans")

    async def sessions(self, request: Request) -> Response:
        rows = await run_in_threadpool(sessions, self.config.data / "sessions")
        return self.render(request, "sessions.html", sessions=rows, nav="sessions")

    async def session(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        shown = await run_in_threadpool(transcript, self.config.data / "sessions", session_id)
        if shown is None:
            raise UiError("sessions.unknown", f"no session {session_id}")
        return self.render(request, "session.html", session=shown, nav="sessions")

    async def failed(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, UiError)
        status = 404 if exc.code.endswith(".unknown") else 400
        if exc.code == "ui.store_unreadable":
            status = 500
        return self.render(request, "error.html", status=status, error=exc, nav="")


def create_app(config: UiConfig) -> Starlette:
    pages = Pages(config)

    async def home(request: Request) -> Response:
        return RedirectResponse("/runs", status_code=303)

    routes = [
        Route("/", home),
        Route("/runs", pages.runs),
        Route("/runs/{run_id}", pages.run),
        Route("/runs/{run_id}/body", pages.run_body),
        Route("/runs/{run_id}/events", pages.events),
        Route("/runs/{run_id}/steps/{step_id}/decision", pages.decide, methods=["POST"]),
        Route("/audit", pages.audit),
        Route("/audit.json", pages.audit_json),
        Route("/plans", pages.plans),
        Route("/sessions", pages.sessions),
        Route("/sessions/{session_id}", pages.session),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(
                Guard, secrets=config.secrets, hosts=config.hosts, cookie=config.secrets.cookie
            )
        ],
        exception_handlers={UiError: pages.failed},
    )
    app.state.pages = pages
    return app
