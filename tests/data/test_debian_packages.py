"""The Debian package fetcher with a fake `apt-get download` / `dpkg-deb -x` (tar files):
no apt or network needed."""

import os
import subprocess
import tarfile

import pytest

from kseq.atomic_files import TEMPORARY_PREFIX
from kseq.data.sources import debian_packages
from kseq.data.sources.debian_packages import DebianPackageError, package_versions, unpacked_packages


class FakeApt:
    """Each package is a tar file holding `usr/share/<package>/file.txt`."""

    def __init__(self, tmp_path, stderr=None):
        self.tmp_path, self.stderr, self.commands = tmp_path, stderr, []

    def __call__(self, command, cwd=None, timeout=600):
        self.commands.append(command[:2])
        if command[:2] == ["apt-get", "download"]:
            if self.stderr:
                return subprocess.CompletedProcess(command, 100, "", self.stderr)
            for name in command[2:]:
                source = self.tmp_path / "sources" / name / "usr/share" / name
                source.mkdir(parents=True, exist_ok=True)
                (source / "file.txt").write_text(name)
                with tarfile.open(os.path.join(cwd, f"{name}_1%3a2.0-1_all.deb"), "w") as tar:
                    tar.add(source.parent.parent, arcname="usr")
            return subprocess.CompletedProcess(command, 0, "", "")
        if command[:2] == ["dpkg-deb", "-x"]:
            with tarfile.open(command[2]) as archive:
                archive.extractall(command[3])
            return subprocess.CompletedProcess(command, 0, "", "")
        raise AssertionError(f"unexpected command {command}")


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(debian_packages.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(debian_packages, "apt_lists_present", lambda: True)

    def install(**options):
        apt = FakeApt(tmp_path, **options)
        monkeypatch.setattr(debian_packages, "_run", apt)
        return apt

    return install


def test_packages_are_unpacked_into_one_published_tree_and_fetched_once(fake_apt, tmp_path):
    apt = fake_apt()
    messages = []
    root = unpacked_packages(["pkg-a", "pkg-b"], "both", messages.append)
    assert root == str(tmp_path / "home" / "debian" / "both")
    assert open(os.path.join(root, "usr/share/pkg-b/file.txt")).read() == "pkg-b"
    assert package_versions(root) == {"pkg-a": "1:2.0-1", "pkg-b": "1:2.0-1"}
    assert messages == ["apt-get download pkg-a pkg-b", "unpacking 1: pkg-a_1%3a2.0-1_all.deb",
                        "unpacking 2: pkg-b_1%3a2.0-1_all.deb"]
    assert os.listdir(tmp_path / "home" / "debian") == ["both"]  # no .deb or scratch left
    assert unpacked_packages(["pkg-b", "pkg-a"], "both", messages.append) == root
    assert len(apt.commands) == 3  # the second call did nothing
    unpacked_packages(["pkg-a", "pkg-c"], "both", messages.append)  # another list: refetched
    assert package_versions(root) == {"pkg-a": "1:2.0-1", "pkg-c": "1:2.0-1"}
    assert not any(name.startswith(TEMPORARY_PREFIX)
                   for name in os.listdir(tmp_path / "home" / "debian"))


def test_a_missing_tool_is_one_clear_error(fake_apt, monkeypatch):
    fake_apt()
    monkeypatch.setattr(debian_packages.shutil, "which",
                        lambda tool: None if tool == "dpkg-deb" else f"/usr/bin/{tool}")
    with pytest.raises(DebianPackageError,
                       match=r"lacks dpkg-deb\. Use a Debian/Ubuntu machine, or unpack kanjidic "
                             r"into .*Received: missing tools"):
        unpacked_packages(["kanjidic"], "kanji", lambda message: None)


def test_an_unknown_package_or_a_failing_mirror_is_named(fake_apt, tmp_path):
    fake_apt(stderr="E: Unable to locate package no-such-font\n")
    with pytest.raises(DebianPackageError, match="apt has no package no-such-font.*apt-get update"):
        unpacked_packages(["kanjidic", "no-such-font"], "kanji", lambda message: None)
    fake_apt(stderr="E: Failed to fetch http://deb.debian.org/...  Connection refused\n")
    with pytest.raises(DebianPackageError, match="mirror reachable.*Connection refused"):
        unpacked_packages(["kanjidic"], "kanji", lambda message: None)
    assert not (tmp_path / "home" / "debian" / "kanji").exists()


@pytest.mark.parametrize("names, cache_name", [("kanjidic", "k"), ([], "k"), (["Bad Name"], "k"),
                                               (["kanjidic"], "../up"), (["kanjidic"], "")])
def test_bad_arguments_are_refused(names, cache_name):
    with pytest.raises(DebianPackageError, match="Received: (names|cache_name)="):
        unpacked_packages(names, cache_name)
