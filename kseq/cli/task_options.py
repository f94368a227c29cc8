"""The options a task takes (its `evaluate_options` or `export_options`), from a command's."""

from kseq.errors import KseqError


def _taken(model, taken, given, optional, command):
    """The options of `given` that the task takes (`taken`: its `evaluate_options` or
    `export_options`); an `optional` one set on the command line that it does not take is
    refused, by its flag."""
    refused = [name for name in optional if given.get(name) is not None and name not in taken]
    if refused:
        flags = ", ".join("--" + name.replace("_", "-") for name in refused)
        raise KseqError(f"`kseq {command}` of a {type(model).__name__} takes no {flags}. "
                        f"Received: {flags}")
    options = {name: given[name] for name in taken
               if name in given and (given[name] is not None or name not in optional)}
    if options.get("length_penalty") == "none":
        options["length_penalty"] = None
    return options


SEARCH_TUNING = ("alpha", "length_penalty", "max_length")  # left to the API's defaults if unset
