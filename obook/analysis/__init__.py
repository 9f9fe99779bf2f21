"""obook's face to KataGo's analysis tools: the JSON analysis engine (``obook analysis``)."""
