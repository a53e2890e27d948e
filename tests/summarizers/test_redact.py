from compactctl.summarizers.redact import redact


def test_each_kind_of_secret_is_redacted_and_ordinary_text_is_not():
    cases = {
        "sk-proj-" + "abcdefghijklmnopqrstuvwx12": "openai-key",
        "sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz": "anthropic-key",
        "AKIA" + "IOSFODNN7EXAMPLE": "aws-access-key",
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "aws-secret-key",
        "ghp_" + "a" * 36: "github-token",
        "xoxb-" + "1234567890-abcdef": "slack-token",
        "Authorization: Bearer " + "abcdefghijklmnop1234": "authorization",
        'curl -H "Bearer ' + 'abcdefghijklmnop1234"': "bearer-token",
        "https://bob:" + "pa55word@example.com/x": "url-password",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----": "private-key",
    }
    for text, kind in cases.items():
        redacted, count = redact(text)
        assert f"[REDACTED:{kind}]" in redacted and count == 1, text
    plain = "Run pytest -q in src/app.py for order ORD-1234; task-runner sk is fine; see https://example.com/a:b"
    assert redact(plain) == (plain, 0)
