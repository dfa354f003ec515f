"""``GET /metrics`` (Prometheus text: this process's metrics, the agent's too in
``berth serve``, every worker's summed with several ``[api]workers``), ``GET
/healthz`` (the process answers) and ``GET /readyz`` (the database, the RPC
transport and, where an agent shares the process, Docker answer: 200, or 503 with a
JSON body naming the failed checks).

No authentication (a prober and a scraper have no token) and kept out of the OpenAPI
document: they are not Zun resources, and a 503 from /readyz is its answer, not a
fault to fuzz.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from berth.api.responses import JSONResponse
from berth.metrics import multiproc
from berth.metrics.health import ALIVE_BODY

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    return Response(generate_latest(multiproc.registry()), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz", include_in_schema=False)
async def healthz() -> JSONResponse:
    return JSONResponse(ALIVE_BODY)


@router.get("/readyz", include_in_schema=False)
def readyz(request: Request) -> JSONResponse:
    report = request.app.state.berth.readiness.report()
    return JSONResponse(report.body(), status_code=report.status_code)
