"""Print the text of a PDF file, page by page (an example file of the pdf-processing skill)."""
import sys

from pypdf import PdfReader

for number, page in enumerate(PdfReader(sys.argv[1]).pages, start=1):
    print(f"--- page {number} ---")
    print(page.extract_text())
