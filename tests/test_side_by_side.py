import pytest

from course_lib.side_by_side import CASE_NAMES_ZH, CASES, case_arguments


def test_a_case_is_found_by_its_english_or_its_chinese_name():
    assert case_arguments("missing file") == {"path": "missing.txt"}
    assert case_arguments("不存在的文件") == {"path": "missing.txt"}
    assert case_arguments("根目录之外") == case_arguments("outside the root") == {"path": "/etc/hostname"}
    assert case_arguments("head 3") == {"path": "notes.txt", "head": 3}


def test_every_case_has_a_chinese_name_that_leads_back_to_it():
    assert set(CASE_NAMES_ZH) == {name for name, _ in CASES}
    for name, arguments in CASES:
        assert case_arguments(CASE_NAMES_ZH[name]) == arguments


def test_the_arguments_are_a_copy():
    case_arguments("missing file")["path"] = "changed.txt"
    assert dict(CASES)["missing file"] == {"path": "missing.txt"}


def test_an_unknown_case_names_the_known_ones():
    with pytest.raises(KeyError, match="no case named 'missing'.*missing file"):
        case_arguments("missing")
