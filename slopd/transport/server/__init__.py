"""The HTTP transport's server (SPEC §12): a Starlette app served by uvicorn beside the watcher."""
