"""The module map and the contracts of `docs/design.md`, made from the code.

Rules:
1. Every module of `slopd/` is listed, package by package, from the bottom layer up (the layers
   contract's order, read from `pyproject.toml`), each with the first sentence of its docstring;
   a package's `__init__.py` describes the package on its heading line, when it has a docstring.
2. A module without a docstring stops the generator, naming it: the map would say nothing of it.
3. The contracts are listed as `pyproject.toml` states them (`[tool.importlinter]`): each one's
   name, and its layers or modules, so the page says what `make lint` enforces.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

from docgen.markdown import code, first_sentence

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "slopd"
WIDTH = 24  # the name column of the map


class ModuleError(Exception):
    """A module the map cannot describe (rule 2)."""


def contracts() -> list[dict[str, Any]]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        found: list[dict[str, Any]] = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    return found


def _summary(path: Path) -> str | None:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return first_sentence(docstring) if docstring else None


def _order() -> list[str]:
    """Rule 1: top-level packages and modules, bottom layer first (`slopd.shell` → `shell`)."""
    layers = next(found["layers"] for found in contracts() if found["type"] == "layers")
    names = []
    for layer in reversed(layers):
        for part in layer.replace("(", "").replace(")", "").split("|"):
            names.append(part.strip().removeprefix("slopd."))
    return names


def _folder(folder: Path) -> list[str]:
    """A package's lines: its heading, its modules, then its subpackages, each the same way."""
    relative = folder.relative_to(ROOT).as_posix() + "/"
    described = _summary(folder / "__init__.py")
    lines = [f"{relative:<{WIDTH}} {described or ''}".rstrip()]
    for path in sorted(folder.glob("*.py")):
        if path.name == "__init__.py":
            continue
        summary = _summary(path)
        if summary is None:
            raise ModuleError(f"{path.relative_to(ROOT)} has no docstring: say what it is and its rules")
        lines.append(f"  {path.name:<{WIDTH - 2}} {summary}")
    for sub in sorted(child for child in folder.iterdir() if (child / "__init__.py").is_file()):
        lines += ["", *_folder(sub)]
    return lines


def module_map() -> str:
    """Rules 1 and 2: every module of slopd, from the bottom layer up."""
    lines: list[str] = []
    for name in _order():
        path = PACKAGE / name
        if path.is_dir():
            lines += _folder(path)
        else:
            module = PACKAGE / f"{name}.py"
            summary = _summary(module)
            if summary is None:
                raise ModuleError(f"{module.relative_to(ROOT)} has no docstring")
            lines.append(f"{module.relative_to(ROOT).as_posix():<{WIDTH}} {summary}")
        lines.append("")
    for loose in sorted(PACKAGE.glob("*.py")):  # `__init__`, `__main__`: not in a layer
        if loose.stem not in _order() and loose.name != "__init__.py":
            lines.append(f"{loose.relative_to(ROOT).as_posix():<{WIDTH}} {_summary(loose) or ''}".rstrip())
    return "```\n" + "\n".join(lines).strip("\n") + "\n```\n"


def contract_list() -> str:
    """Rule 3."""
    items = []
    for found in contracts():
        if found["type"] == "layers":
            layers = " → ".join(code(layer) for layer in found["layers"])
            items.append(f"- **{found['name']}** (layers, top first): {layers}")
        elif found["type"] == "forbidden":
            sources = ", ".join(code(name) for name in found["source_modules"])
            forbidden = ", ".join(code(name) for name in found["forbidden_modules"])
            ignored = found.get("ignore_imports", [])
            but = f"; except {', '.join(code(name) for name in ignored)}" if ignored else ""
            direct = " (direct imports)" if found.get("allow_indirect_imports") else ""
            items.append(f"- **{found['name']}**: {sources} may not import {forbidden}{direct}{but}")
        else:
            modules = ", ".join(code(name.removeprefix("slopd.")) for name in found["modules"])
            items.append(f"- **{found['name']}** ({found['type']}): {modules}")
    return "\n".join(items) + "\n"
