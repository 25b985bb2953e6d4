"""Every shareable widget's spec (ui/widget_spec.py), collected from one small module per page.

A link to any page is parsed on the session's first run, whichever page it opens, so every module is imported
here, found by listing this folder and each room of ui/ (a sub-package's `specs` and `*_specs` modules, e.g.
ui/attention/specs.py): a new page adds its module and nothing else. A module may also declare its
page's SECTIONS (PageSection, in page order), the parts a lesson stop may name. `common` comes first (the
model before any layer or head); within a module, specs keep their order (lengths before positions).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path

from ui.widget_spec import PageSection, State, WidgetSpec


def spec_module_names() -> list[str]:
    """This folder's modules and the rooms' spec modules, `common` first, then by page (the name less _specs)."""
    rooms = [room.name for room in pkgutil.iter_modules([str(Path(__path__[0]).parent)])
             if room.ispkg and room.name != "specs"]
    names = [f"{__name__}.{module.name}" for module in pkgutil.iter_modules(__path__)]
    names += [f"ui.{room}.{module.name}" for room in rooms
              for module in pkgutil.iter_modules([str(Path(__path__[0]).parent / room)])
              if module.name == "specs" or module.name.endswith("_specs")]

    def page(name: str) -> str:
        package, module = name.rsplit(".", 1)
        return package.rsplit(".", 1)[-1] if module == "specs" else module.removesuffix("_specs")

    return sorted(names, key=lambda name: (name != f"{__name__}.common", page(name)))


_LOADED = [importlib.import_module(name) for name in spec_module_names()]

# link parameter name -> spec, in the order a link is read
SPECS: dict[str, WidgetSpec] = {spec.url: spec for module in _LOADED for spec in module.SPECS}
# Values a page keeps while it is not shown but that are not in links: widget key -> check(value, state),
# which returns the value if the current model or page still offers it, else raises ValueError (KeyError, TypeError).
KEPT_ONLY: dict[str, Callable[[object, State], object]] = {
    key: check for module in _LOADED for key, check in getattr(module, "KEPT_ONLY", {}).items()}
# page -> its sections in page order (a page without SECTIONS has none: a lesson stop shows it from the top)
SECTIONS: dict[str, tuple[PageSection, ...]] = {
    module.PAGE[0]: tuple(module.SECTIONS) for module in _LOADED if hasattr(module, "SECTIONS")}
