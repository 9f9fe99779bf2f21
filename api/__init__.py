"""The book service: a JSON API over a book store and a live dashboard (``obook serve``)."""
