"""Program-reported metrics: the one ``MetricSpec`` lives in :mod:`benchlab.store.formats.metric_spec`
(it is the parser of a text format); these names stay importable from here."""

from benchlab.store.formats.metric_spec import (  # noqa: F401
    MetricSpec,
    MetricSpecError,
    MetricValueError,
    compile_metric_regex,
    extract,
    parse_metric_spec,
)
