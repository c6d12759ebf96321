"""Monthly chargeback reports: issued statements rendered as HTML, PDF, and per-team CSV and XLSX.

``statement`` builds the data stored with each issued version; ``html``, ``pdf`` and ``tables`` render only
from that data; ``report`` issues when needed and writes ``<home>/reports/<YYYY-MM>/v<N>/``.
"""
