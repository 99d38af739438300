"""Files for the knowledge tests, made on the spot: PDFs with fpdf2 (text, encrypted, image-only),
Markdown, code and text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fpdf import FPDF


def make_pdf(
    path: Path, pages: Sequence[str], *, password: str | None = None, text: bool = True
) -> Path:
    """A PDF with one page per text (or, with `text=False`, pages with only a drawn shape)."""
    pdf = FPDF()
    if password is not None:
        pdf.set_encryption(owner_password="owner", user_password=password)
    pdf.set_font("helvetica", size=11)
    for page in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, page)
        else:
            pdf.rect(20, 20, 120, 80, style="F")
    pdf.output(str(path))
    return path
