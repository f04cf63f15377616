"""The JSON the API reads and answers: request bodies checked (validation.py), the records of its
answers (records.py), and every error (errors.py)."""
