"""The page's CSS for small screens: figures sized to the window, never below a readable
size, and columns that hold a figure stacked where they would be too narrow."""

from __future__ import annotations

# Below this height the Playground's square plot, under its legend and beside its colour
# bar, is narrower than 300 px: on a short window the figure runs below the fold instead.
FIGURE_MIN_HEIGHT = 480
FIGURE_MAX_HEIGHT = 900
# Windows narrower than this put side-by-side columns that hold a figure under each other.
NARROW_WINDOW = 1100


def figure_heights_css(space=0):
    """The Playground's boundary and drawing plane (run_view.decision_view, ui.drawing): as
    tall as their column is wide, less the legend above and the colour bar beside (so the
    plot is square and fills the column), and short enough to fit in the window below what
    comes before them (the drawing's controls too, and ``space`` pixels more: a lesson's
    banner)."""
    return "".join(
        f".st-key-{key} > div{{height:clamp({FIGURE_MIN_HEIGHT}px,min(calc(100cqw - 15px),"
        f"calc(100vh - {above + space}px)),{FIGURE_MAX_HEIGHT}px)}}"
        for key, above in (("boundary_figure", 290), ("drawing_figure", 400)))


# Below NARROW_WINDOW the Playground's notes go under the picture, the metrics shrink to
# stay on one row, and the drawing plane fits the window once scrolled to its controls;
# on every page, columns holding a figure go under each other.
STACKED = "[data-testid='stHorizontalBlock']:has(> [data-testid='stColumn'] .js-plotly-plot)"
SMALL_SCREEN_CSS = (
    ".st-key-boundary_figure,.st-key-drawing_figure{container-type:inline-size}"
    + figure_heights_css()
    + f"@media (max-width:{NARROW_WINDOW}px){{"
    f"{STACKED}{{flex-wrap:wrap}}"
    f"{STACKED} > [data-testid='stColumn']{{flex:1 1 100% !important;min-width:100%}}"
    f".st-key-drawing_figure > div{{height:clamp({FIGURE_MIN_HEIGHT}px,"
    f"min(calc(100cqw - 15px),calc(100vh - 170px)),{FIGURE_MAX_HEIGHT}px)}}"
    "[data-testid='stMetricValue']{font-size:1.2rem}"
    "[data-testid='stMetricLabel'] p{font-size:0.7rem;word-break:normal;"
    "overflow-wrap:normal}"
    "[data-testid='stMetricLabel'] [data-testid='stMarkdownContainer']{overflow:visible;"
    "text-overflow:clip}"
    "[data-testid='stMetricDelta']{font-size:0.75rem}"
    "[data-testid='stHorizontalBlock']:has(> div [data-testid='stMetric']){column-gap:0.4rem}"
    "[data-testid='stColumn']:has(> div [data-testid='stMetric']){min-width:4rem}}"
)


def upload_cap_css(max_mb):
    """The file uploaders' note of the size they take: the app's cap (``max_mb``), not
    Streamlit's ceiling (.streamlit/config.toml, above it so that the app's message answers
    a file over the cap)."""
    return ("[data-testid='stFileUploaderDropzoneInstructions'] span{font-size:0}"
            "[data-testid='stFileUploaderDropzoneInstructions'] span::after{"
            f"content:'Up to {max_mb} MB per file';font-size:0.875rem}}")
