"""The documentation's references, generated from the code: `make docs-refs` (`python -m docgen`).

Rules:
1. A generated part of a page sits between `<!-- generated: NAME -->` and `<!-- end generated -->`;
   everything else on the page is written by hand. `BLOCKS` (in `docgen.blocks`) says which
   function makes each part and which page holds it.
2. Each part is made from the code itself, never from a copy of it: the argument parser
   (`cli`), what the config parser takes (`config`), the MCP server's tool schemas (`mcp`), the
   HTTP server's OpenAPI document (`http`), the log calls in `slopd/` (`events`), and admission's
   own refusals (`admission`).
3. The output depends on the code only — not on the machine, the terminal or the time — so
   `tests/e2e/docs/test_docs_references.py` can compare each page with what the code makes now, and a
   change to the code without `make docs-refs` fails that test.
4. Not shipped: this package lives beside `slopd/`, reads it, and is not in the wheel.
"""
