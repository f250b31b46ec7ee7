"""Reading runs and reporting them: a run folder read and analysed (`analysis`), its tables, plots and
report (`report_tables`, `plots`, `call_costs`, `report`), the paper's and the published numbers beside it
(`paper`, `published`, `published_report`, `setting`) and two runs compared (`comparison`). Runs are read
through `artefacts.runs`; the scores are `scoring`'s."""

from __future__ import annotations

from .report import write_report

__all__ = ["write_report"]
