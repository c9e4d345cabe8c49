# stream-parser serve: the OpenAI-compatible proxy (docs/serve.md), one process a container.
# Configured by the environment; run as many replicas as needed behind a load balancer:
#
#   docker build -t stream-parser-serve .
#   docker run -p 8100:8100 -e STREAM_PARSER_UPSTREAM=http://vllm:8000/v1 stream-parser-serve
#
# STREAM_PARSER_UPSTREAM is required; STREAM_PARSER_API_KEY, STREAM_PARSER_UPSTREAM_API_KEY,
# STREAM_PARSER_TIMEOUT, STREAM_PARSER_DIALECT... are read too (docs/serve.md, "Options").
FROM python:3.13-slim

WORKDIR /src
COPY . .
# The package with its serve extra (Starlette, uvicorn, httpx2), then the sources go.
RUN python -m pip install --no-cache-dir '.[serve]' \
    && cd / && rm -rf /src \
    && useradd --system --no-create-home proxy

WORKDIR /
USER proxy
EXPOSE 8100
# The load balancer's check is the same: GET /healthz answers without calling the upstream.
HEALTHCHECK --interval=30s --timeout=3s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8100/healthz', timeout=2)"
CMD ["stream-parser", "serve", "--host", "0.0.0.0", "--port", "8100"]
