"""The dashboard's pages: one Flask blueprint a module. Each imports helpers (dashboard/), jobs/ and
queryapi/, never another page module and never the service."""
