"""Every kind of configuration error names the file, the line, the key path and what was expected."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from xce.config import loader
from xce.config.loader import ConfigError, load_config, parse_config
from xce.config.schema import ClusterConfig


def errors_of(text: str, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(textwrap.dedent(text), "site.toml", **kw)
    return info.value


def paths(err: ConfigError) -> list[str]:
    return [path for path, _ in err.errors]


def test_empty_file_is_the_defaults():
    assert parse_config("") == ClusterConfig()


def test_config_error_is_a_value_error_and_names_the_file():
    err = errors_of("[queues.normal]\nprioriy = 5\n")
    assert isinstance(err, ValueError)
    assert err.source == "site.toml"
    assert str(err).startswith("site.toml:2: queues.normal.prioriy: ")


def test_unknown_key_suggests_the_close_one():
    err = errors_of(
        """
        [queues.normal]
        prioriy = 5
        """
    )
    assert err.errors == [("queues.normal.prioriy", "unknown key 'prioriy'; did you mean 'priority'?")]
    assert err.issues[0].line == 3


def test_unknown_top_level_table_suggests_the_section():
    err = errors_of("[queue.high]\npriority = 1\n")
    assert err.errors == [("queue", "unknown key 'queue'; did you mean 'queues'?")]


def test_unknown_key_with_no_close_match_lists_allowed_keys_and_where_it_belongs():
    err = errors_of("[queues.normal]\nslots = 4\n")
    (path, message), = err.errors
    assert path == "queues.normal.slots"
    assert "'slots' belongs in [hosts.<name>]" in message
    assert "expected one of: active, backfill_depth, description," in message


def test_wrong_type_is_not_coerced():
    err = errors_of('[queues.normal]\npriority = "50"\n')
    assert err.errors == [("queues.normal.priority", 'expected an integer, got string "50"')]


def test_a_whole_number_is_a_valid_float():
    cfg = parse_config("[scheduler]\nround_interval_s = 1\n")
    assert cfg.scheduler.round_interval_s == 1.0


def test_wrong_type_of_table():
    err = errors_of("queues = 5\n")
    assert err.errors == [("queues", "expected a table, got integer 5")]


def test_wrong_type_inside_an_array_names_the_index():
    err = errors_of(
        """
        [queues.normal]
        preemptible_queues = [3]
        """
    )
    assert err.errors == [("queues.normal.preemptible_queues[0]", "expected a string, got integer 3")]


@pytest.mark.parametrize(
    "text, path, message",
    [
        ("[queues.normal]\nmax_running = 0\n", "queues.normal.max_running", "expected an integer >= 1, got integer 0"),
        ("[scheduler]\nround_interval_s = 0\n", "scheduler.round_interval_s", "expected a number > 0, got integer 0"),
        (
            '[shared_resources."example.com/lic"]\ntotal = -1\n',
            'shared_resources."example.com/lic".total',
            "expected an integer >= 0, got integer -1",
        ),
    ],
)
def test_out_of_range_number(text, path, message):
    assert errors_of(text).errors == [(path, message)]


def test_bad_signal():
    err = errors_of('[queues.normal]\npreempt_signal = "SIGKILL"\n')
    assert err.errors == [
        ("queues.normal.preempt_signal", "expected one of 'SIGSTOP', 'SIGTSTP', got string \"SIGKILL\"")
    ]


def test_misspelt_choice_gets_a_suggestion():
    err = errors_of('[queues.normal]\npreempt_signal = "SIGSTOPP"\n')
    assert err.errors[0][1].endswith("did you mean 'SIGSTOP'?")


def test_unknown_queue_in_preemptible_queues():
    err = errors_of(
        """
        [queues.high]
        priority = 50
        preemptible_queues = ["lo"]

        [queues.low]
        [queues.normal]
        """
    )
    assert err.errors == [
        (
            "queues.high.preemptible_queues[0]",
            "unknown queue 'lo'; did you mean 'low'? (queues defined in this file: high, low, normal)",
        )
    ]
    assert str(err) == (
        "site.toml:4: queues.high.preemptible_queues[0]: unknown queue 'lo'; did you mean 'low'?"
        " (queues defined in this file: high, low, normal)"
    )


def test_unknown_project():
    err = errors_of('[queues.normal]\nproject_name = "cfd"\n')
    assert err.errors == [
        ("queues.normal.project_name", "unknown project 'cfd' (projects defined in this file: default)")
    ]


def test_unknown_default_queue():
    err = errors_of('default_queue = "nromal"\n')
    assert err.errors == [
        ("default_queue", "unknown queue 'nromal'; did you mean 'normal'? (queues defined in this file: normal)")
    ]


def test_implicit_default_queue_that_does_not_exist_says_so():
    err = errors_of("[queues.batch]\n")
    (path, message), = err.errors
    assert path == "default_queue"
    assert message.startswith("not set, so it is 'normal', but no queue has that name")
    assert err.issues[0].line is None


def test_missing_required_key():
    err = errors_of('[shared_resources."example.com/lic"]\ndescription = "x"\n')
    assert err.errors == [
        ('shared_resources."example.com/lic".total', "required key 'total' is missing; expected an integer")
    ]
    assert err.issues[0].line == 1


@pytest.mark.parametrize(
    "name, path, expected",
    [
        ("cfd-license", "shared_resources.cfd-license", "needs a domain prefix"),
        ("example/cfd", 'shared_resources."example/cfd"', "with a dotted domain"),
        ("xce.io/cfd", 'shared_resources."xce.io/cfd"', "reserved for XCE"),
    ],
)
def test_shared_resource_names_follow_the_naming_rules(name, path, expected):
    err = errors_of(f'[shared_resources."{name}"]\ntotal = 1\n')
    assert len(err.errors) == 1
    assert err.errors[0][0] == path
    assert expected in err.errors[0][1]
    assert err.issues[0].line == 1


def test_toml_syntax_error_names_line_and_column():
    err = errors_of(
        """
        [queues.normal]
        priority 50
        """
    )
    (path, message), = err.errors
    assert path == ""
    assert message.startswith("TOML syntax error at line 3, column 10: ")
    assert (err.issues[0].line, err.issues[0].column) == (3, 10)
    assert str(err).startswith("site.toml: TOML syntax error at line 3, column 10: Expected '='")


def test_toml_syntax_error_at_end_of_file_still_names_a_line():
    err = errors_of("a = 1\nb = [1, 2\n")
    assert err.errors[0][1].startswith("TOML syntax error at line 3, column 1: ")
    assert "end of the file" in err.errors[0][1]


def test_several_errors_are_all_listed_one_per_line_in_file_order():
    err = errors_of(
        """
        default_queue = "normal"

        [queues.normal]
        priority = "high"
        preemptible_queues = ["nope"]

        [queues.low]
        max_running = 0
        statuss = "open"
        """
    )
    assert paths(err) == [
        "queues.normal.priority",
        "queues.normal.preemptible_queues[0]",
        "queues.low.max_running",
        "queues.low.statuss",
    ]
    lines = str(err).splitlines()
    assert len(lines) == 4
    assert [line.split(":")[1] for line in lines] == ["5", "6", "9", "10"]
    assert all(line.startswith("site.toml:") for line in lines)


def test_line_lookup_copes_with_dotted_keys_inline_tables_and_multiline_strings():
    err = errors_of(
        '''
        queues.normal.description = """
        priority = 1
        """
        queues.normal.prioriy = 2
        projects = { default = { prio = 1 } }
        '''
    )
    lines = {i.path: i.line for i in err.issues}
    assert lines == {"queues.normal.prioriy": 5, "projects.default.prio": 6}


def test_load_config_names_the_path(tmp_path):
    path = tmp_path / "xce.toml"
    path.write_text("[queues.normal]\npriority = true\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:2: queues.normal.priority: expected an integer, got boolean true"


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.toml")
    assert info.value.errors == [("", "cannot read the file: No such file or directory")]
    assert str(tmp_path / "nope.toml") in str(info.value)


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'cluster_name = "ok"\ndescription = "caf\xe9"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "not UTF-8 text at line 2" in info.value.errors[0][1]


# --- plugin names ------------------------------------------------------------------------------


@pytest.fixture
def fake_registries(monkeypatch):
    """Registries with the builtin names, so the check is tested whatever the core has landed yet."""
    for module_name, names in (
        (loader.PICKER_REGISTRY, ["builtin_fcfs"]),
        (loader.PREEMPT_REGISTRY, ["lowest_priority_first"]),
    ):
        module = types.ModuleType(module_name)
        module.available = lambda names=names: list(names)
        monkeypatch.setitem(sys.modules, module_name, module)


PLUGIN_TYPOS = """
[scheduler]
job_pick_plugin = "fcfs"

[queues.normal]
job_pick_plugin = "builtin_fcfs"
preempt_policy = "lowest_priority"
"""


def test_unknown_plugin_names_with_fake_registries(fake_registries):
    err = errors_of(PLUGIN_TYPOS)
    assert paths(err) == ["scheduler.job_pick_plugin", "queues.normal.preempt_policy"]
    assert err.errors[0][1].startswith(
        "unknown job picker 'fcfs'; did you mean 'builtin_fcfs'? (registered: builtin_fcfs"
    )
    assert err.errors[1][1].startswith(
        "unknown preemption policy 'lowest_priority'; did you mean 'lowest_priority_first'?"
    )


def test_plugin_check_can_be_turned_off(fake_registries):
    parse_config(PLUGIN_TYPOS, check_plugins=False)


def test_missing_registry_module_skips_the_check(monkeypatch):
    monkeypatch.setattr(loader, "PICKER_REGISTRY", "xce.core.no_such_package.registry")
    monkeypatch.setattr(loader, "PREEMPT_REGISTRY", "xce.core.preempt.no_such_registry")
    monkeypatch.setattr(
        loader,
        "_PLUGIN_WORDS",
        {
            "xce.core.no_such_package.registry": ("job picker", "xce.pickers"),
            "xce.core.preempt.no_such_registry": ("preemption policy", "xce.preempt_policies"),
        },
    )
    parse_config(PLUGIN_TYPOS)


def test_a_registry_that_fails_to_import_is_not_mistaken_for_a_missing_one(monkeypatch):
    def broken(name):
        raise ModuleNotFoundError("No module named 'numpyy'", name="numpyy")

    monkeypatch.setattr(loader.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError):
        loader.registered(loader.PICKER_REGISTRY)


def test_unknown_picker_with_the_real_registry():
    err = errors_of('[scheduler]\njob_pick_plugin = "no_such_picker"\n')
    assert paths(err) == ["scheduler.job_pick_plugin"]
    assert "builtin_fcfs" in err.errors[0][1]
    parse_config('[scheduler]\njob_pick_plugin = "builtin_fcfs"\n')


def test_unknown_preempt_policy_with_the_real_registry():
    err = errors_of('[queues.normal]\npreempt_policy = "no_such_policy"\n')
    assert paths(err) == ["queues.normal.preempt_policy"]
    assert "lowest_priority_first" in err.errors[0][1]
    parse_config('[queues.normal]\npreempt_policy = "lowest_priority_first"\n')


def test_a_queue_default_run_limit_longer_than_its_maximum_is_refused_where_it_is_written():
    err = errors_of("[queues.normal]\nrun_limit = 90\nmax_run_limit = 60\n")
    (path, message), = err.errors
    assert path == "queues.normal"
    assert "run_limit (90 min) is longer than max_run_limit (60 min)" in message
