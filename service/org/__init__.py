"""An organization's own records, whichever door changes them: its projects and tags as made
(admin.py, palette.py), its API keys (keys.py), the administrators who sign in (accounts.py), and
the record of every change (org_record.py, audit.py)."""
