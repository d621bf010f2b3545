from flightdeck.launch import Journal


def test_pg(pg_url):
    j = Journal(url=pg_url)
    j.create_run(
        "r1",
        plan_name="p",
        plan_path="/p",
        content_hash=None,
        launch_time="t",
        inputs={"a": 1},
        options={},
    )
    with j.batch():
        j.step_started("r1", "a", "transform", None)
        j.step_finished("r1", "a", "transform", "completed", result={"x": 1})
        j.step_started("r1", "b", "transform", None)
        assert [s.step_id for s in j.steps("r1")] == ["a", "b"]
    j.output("r1", {"name": "o", "mime_type": "text/plain", "sha256": "x", "bytes": 1}, "c")
    print(j.run("r1"), j.steps("r1"), j.outputs("r1"))
    j.close()
    j2 = Journal(url=pg_url)
    assert j2.run("r1").inputs == {"a": 1}
