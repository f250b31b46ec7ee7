"""The run viewer: one self-contained HTML page to browse runs written by `pddlworlds eval`.

`read_run` reads a run folder (tolerating runs in progress and resumed runs), `page_data` computes what the
page shows, `build_html`/`write_page` make the file; `pddlworlds view` is the command (`viewer.cli`).
"""

from ..artefacts.runs import RunFolder
from .page import build_html, write_page
from .pagedata import page_data
from .pictures import PICTURES, picture_of
from .runs import ViewerError, ViewerWarning, read_run

__all__ = [
    "PICTURES",
    "RunFolder",
    "ViewerError",
    "ViewerWarning",
    "build_html",
    "page_data",
    "picture_of",
    "read_run",
    "write_page",
]
