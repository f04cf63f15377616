"""The demo organization (demo.py) and its generated queries (demo_data.py, the word lists in
demo_words/)."""
