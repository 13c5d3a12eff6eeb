"""matplotlib, set up once for the course's pictures: no window, the edition's fonts, PNG bytes.

matplotlib is imported only when a picture is drawn (it takes about half a second), never when
`course_lib` is. Fonts: DejaVu Sans (matplotlib's own) for Latin text, then the first font with
Chinese glyphs that is installed (WenQuanYi Micro Hei, which `.ci/run` and Binder install;
Noto Sans CJK; the ones macOS and Windows ship), which matplotlib falls back to glyph by glyph.
In the zh-CN edition without any such font, one line says what to install, instead of empty boxes
drawn without a word.

A PNG is the same bytes for the same picture: no date and no version in its metadata.
"""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path
from typing import Any

from course_lib.lang import language, say

CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
             "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "SimHei", "Heiti SC", "Arial Unicode MS")  # fmt: skip
"""Fonts with simplified Chinese glyphs, in the order they are preferred."""

COLORS = {"request": "#1f5f99", "response": "#1f5f99", "notify": "#6b6b6b", "error": "#c0392b",
          "link": "#fff6d5", "refusal": "#fde2dd", "wait": "#e8e8e8", "ok": "#2e7d32", "lane": "#9aa5b1"}  # fmt: skip
DPI = 110
_warned = False


def pyplot() -> Any:
    """`matplotlib.pyplot` on the Agg backend (no window), with the course's fonts."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    # A list of families: matplotlib takes each glyph from the first family that has it.
    plt.rcParams["font.family"] = ["DejaVu Sans", *cjk_fonts()]
    return plt


def cjk_fonts() -> list[str]:
    """The installed fonts of `CJK_FONTS` (matplotlib's font list), preferred first.

    matplotlib lists the system's fonts once and caches the list: a font installed after that (a
    learner who followed `check_fonts`' advice) is looked for again among the system's font files."""
    from matplotlib import font_manager

    found = [name for name in CJK_FONTS if name in {entry.name for entry in font_manager.fontManager.ttflist}]
    if not found:
        for path in font_manager.findSystemFonts():
            if any(mark in Path(path).name.lower() for mark in _CJK_FILES):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        found = [name for name in CJK_FONTS if name in {entry.name for entry in font_manager.fontManager.ttflist}]
    return found


_CJK_FILES = ("wqy", "notosanscjk", "notosanssc", "sourcehansans", "pingfang", "hiragino", "msyh", "simhei")
"""How the files of `CJK_FONTS` are named (lower case), to find one installed after matplotlib's cache was made."""


def cjk_font_file() -> str | None:
    """The file of the first installed Chinese font, or None."""
    from matplotlib import font_manager

    found = cjk_fonts()
    return font_manager.findfont(found[0], fallback_to_default=False) if found else None


def check_fonts(texts: list[str]) -> None:
    """In the zh-CN edition, say once (stderr) when no installed font can draw these texts' Chinese."""
    global _warned
    if _warned or language() != "zh-CN" or cjk_fonts():
        return
    if any(ord(ch) > 0x2E80 for text in texts for ch in text):
        _warned = True
        print(say("No font with Chinese glyphs is installed, so the pictures show boxes for Chinese text: install one "
                  "(Debian/Ubuntu: apt-get install fonts-wqy-microhei) and restart the kernel.",
                  "没有安装带中文字形的字体，所以图里的中文会显示成方框：请安装一个（Debian/Ubuntu：apt-get install "
                  "fonts-wqy-microhei），然后重启内核。"), file=sys.stderr)  # fmt: skip


def png(figure: Any) -> bytes:
    """The figure as PNG bytes (closed afterwards); no metadata, so the same picture gives the same bytes."""
    plt = pyplot()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")  # said once by check_fonts instead
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight", pad_inches=0.15)
    plt.close(figure)
    return buffer.getvalue()


def text_width(text: str, size: float) -> float:
    """About how wide `text` is drawn at `size` points, in inches (a Chinese character counts two)."""
    from course_lib.lang import display_width

    return display_width(text) * size * 0.56 / 72
