"""Importing queries into a project: files read into the import's own shape (import_sources.py,
workbook_files.py, zip_members.py, language_detection.py), the import itself (imports.py) and its
background jobs (import_jobs.py)."""
