import hashlib
import uuid

from hypothesis import given
from hypothesis import strategies as st

from compactctl import digests

NAMESPACE = uuid.UUID("6f1c9b1e-2f5a-4a55-9a8e-63a1d1c0c7e1")


@given(st.binary(max_size=3000))
def test_the_digests_are_hashlibs(data):
    assert digests.blake2b(data, digest_size=16).digest() == hashlib.blake2b(data, digest_size=16).digest()
    assert digests.blake2b(data, digest_size=16).hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digests.sha1(data).digest() == hashlib.sha1(data).digest()


@given(st.text())
def test_uuid5_is_the_standard_librarys(name):
    assert digests.uuid5(NAMESPACE, name) == uuid.uuid5(NAMESPACE, name)


def test_none_is_openssls():
    assert "openssl" not in repr(digests.sha256).lower() and "openssl" not in repr(digests.sha1).lower()
