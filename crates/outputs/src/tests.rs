//! The planner on real files in a scratch directory: collisions by name, by `./`, by symbolic and
//! hard link, an output onto an input, unwritable places, names that claim another format; and a
//! property test of paths aliased at random.

use super::*;
use std::os::unix::fs::symlink;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a scratch directory")
}

/// Checks a plan of CSV outputs `outs` and inputs `ins`.
fn plan(outs: &[&Path], ins: &[&Path]) -> Result<Outputs, Refusal> {
    let mut p = Plan::new();
    for (k, i) in ins.iter().enumerate() {
        p.input(&format!("input{k}"), i);
    }
    for (k, o) in outs.iter().enumerate() {
        p.output(&format!("--out{k}"), Some(o), Kind::CSV);
    }
    p.check()
}

fn same_outputs(r: Result<Outputs, Refusal>) -> (String, String) {
    match r {
        Err(Refusal::SameOutput { first, second }) => (first.label, second.label),
        other => panic!("expected two outputs to be the same file, got {other:?}"),
    }
}

#[test]
fn two_outputs_of_one_name_are_refused_whether_or_not_the_file_exists() {
    let d = scratch();
    let a = d.path().join("a.csv");
    assert_eq!(same_outputs(plan(&[&a, &a], &[])), ("--out0".into(), "--out1".into()));
    fs::write(&a, "kept").unwrap();
    assert_eq!(same_outputs(plan(&[&a, &a], &[])), ("--out0".into(), "--out1".into()));
    assert_eq!(fs::read_to_string(&a).unwrap(), "kept", "checking truncated the file");
}

#[test]
fn dot_slash_and_dot_dot_name_the_same_file() {
    let d = scratch();
    fs::create_dir(d.path().join("sub")).unwrap();
    let a = d.path().join("a.csv");
    let dotted = d.path().join(".").join("a.csv");
    let up = d.path().join("sub").join("..").join("a.csv");
    same_outputs(plan(&[&a, &dotted], &[]));
    same_outputs(plan(&[&up, &a], &[]));
    fs::write(&a, "").unwrap();
    same_outputs(plan(&[&dotted, &up], &[]));
    // Relative to the working directory (the crate's, under cargo test), as a user types them.
    let mut p = Plan::new();
    p.output("--a", Some(Path::new("./src/not-there.csv")), Kind::CSV);
    p.output("--b", Some(Path::new("src/not-there.csv")), Kind::CSV);
    assert!(matches!(p.check(), Err(Refusal::SameOutput { .. })));
    let mut p = Plan::new();
    p.input("the source", Path::new("src/lib.rs"));
    p.output("--out", Some(Path::new("./src/../src/lib.rs")), Kind::TRACE);
    assert!(matches!(p.check(), Err(Refusal::OutputIsInput { .. })));
}

#[test]
fn a_symbolic_link_is_its_target_even_before_the_target_exists() {
    let d = scratch();
    let (f, l) = (d.path().join("f.csv"), d.path().join("l.csv"));
    symlink("f.csv", &l).unwrap();
    // Dangling: writing through the link would create f.csv.
    same_outputs(plan(&[&l, &f], &[]));
    fs::write(&f, "").unwrap();
    same_outputs(plan(&[&f, &l], &[]));
    // A chain of links, one of them absolute.
    let l2 = d.path().join("l2.csv");
    symlink(&l, &l2).unwrap();
    same_outputs(plan(&[&l2, &f], &[]));
    // A link to a directory in the middle of the path.
    let sub = d.path().join("sub");
    fs::create_dir(&sub).unwrap();
    symlink(&sub, d.path().join("to-sub")).unwrap();
    same_outputs(plan(&[&sub.join("x.csv"), &d.path().join("to-sub").join("x.csv")], &[]));
}

#[test]
fn hard_links_are_the_same_file() {
    let d = scratch();
    let (f, h) = (d.path().join("f.csv"), d.path().join("h.csv"));
    fs::write(&f, "x").unwrap();
    fs::hard_link(&f, &h).unwrap();
    same_outputs(plan(&[&f, &h], &[]));
    // Two copies are not.
    let c = d.path().join("c.csv");
    fs::copy(&f, &c).unwrap();
    plan(&[&f, &c], &[]).unwrap();
}

#[test]
fn an_output_onto_an_input_is_refused_naming_both() {
    let d = scratch();
    let s = d.path().join("s.csv");
    fs::write(&s, "input").unwrap();
    let l = d.path().join("l.csv");
    symlink(&s, &l).unwrap();
    for out in [s.clone(), d.path().join(".").join("s.csv"), l.clone()] {
        match plan(&[&d.path().join("other.csv"), &out], &[&s]) {
            Err(e @ Refusal::OutputIsInput { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("--out1") && msg.contains("input0"), "{msg}");
                assert!(msg.contains(&out.display().to_string()) && msg.contains(&s.display().to_string()));
            }
            other => panic!("{}: {other:?}", out.display()),
        }
    }
    // The input given through its link, the output by its name.
    assert!(matches!(plan(&[&s], &[&l]), Err(Refusal::OutputIsInput { .. })));
    assert_eq!(fs::read_to_string(&s).unwrap(), "input");
    // A missing input is no file to protect, except from an output of the same name (which the
    // reader would then find).
    let gone = d.path().join("gone.csv");
    plan(&[&d.path().join("new.csv")], &[&gone]).unwrap();
    assert!(matches!(plan(&[&gone], &[&gone]), Err(Refusal::OutputIsInput { .. })));
    // Standard input is no file.
    plan(&[&d.path().join("new.csv")], &[Path::new("-")]).unwrap();
}

#[test]
fn unwritable_places_are_refused_with_the_system_s_reason() {
    let d = scratch();
    let why = |p: &Path| match plan(&[p], &[]) {
        Err(e @ Refusal::Unwritable { .. }) => e.to_string(),
        other => panic!("{}: {other:?}", p.display()),
    };
    let missing = d.path().join("no").join("such").join("x.csv");
    let m = why(&missing);
    assert!(m.contains("--out0") && m.contains("does not exist") && m.contains("no/such"), "{m}");
    let file = d.path().join("file");
    fs::write(&file, "").unwrap();
    let m = why(&file.join("x.csv"));
    assert!(m.contains("Not a directory"), "{m}");
    let m = why(d.path());
    assert!(m.contains("cannot write it") && m.contains("Is a directory"), "{m}");
    let m = why(&d.path().join("dir-to-be/"));
    assert!(m.contains("Is a directory"), "{m}");
    // sysfs takes no new file, whoever asks (root included, whom permissions do not stop).
    let m = why(Path::new("/sys/outputs-test.csv"));
    assert!(m.contains("cannot create it") && m.contains("Permission denied"), "{m}");
    // Nothing was left behind.
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn devices_and_pipes_are_never_the_same_file() {
    let null = Path::new("/dev/null");
    let out = plan(&[null, null], &[null]).unwrap();
    assert_eq!(out.iter().count(), 2);
}

#[test]
fn checking_creates_nothing_and_empties_nothing() {
    let d = scratch();
    let (new, old) = (d.path().join("new.csv"), d.path().join("old.csv"));
    fs::write(&old, "precious").unwrap();
    let out = plan(&[&new, &old], &[]).unwrap();
    assert!(!new.exists());
    assert_eq!(fs::read_to_string(&old).unwrap(), "precious");
    assert_eq!(out.iter().map(|o| o.path()).collect::<Vec<_>>(), [new.as_path(), old.as_path()]);
}

#[test]
fn names_that_claim_another_format_are_refused_naming_option_and_path() {
    let d = scratch();
    let check = |label: &str, name: &str, kind: Kind, flag: Option<(&str, Format)>| {
        let mut p = Plan::new();
        let slot = p.output_as(label, Some(&d.path().join(name)), kind, flag);
        p.check().map(|o| o.get(slot).unwrap().format())
    };
    let e = check("--jobs", "x.png", Kind::CSV_OR_JSON_LINES, None).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("x.png: a .png file holds PNG, but --jobs writes CSV or JSON Lines"), "{m}");
    assert!(
        m.starts_with("--jobs ") && m.contains("x.png") && m.contains("PNG") && m.contains(".jsonl"),
        "{m}"
    );
    let m = check("--gantt", "g.gif", Kind::IMAGE, None).unwrap_err().to_string();
    assert!(m.contains("--gantt") && m.contains("g.gif: unknown image format") && m.contains(".png"), "{m}");
    let m = check("--trace", "t.json", Kind::TRACE, None).unwrap_err().to_string();
    assert!(m.contains("--trace") && m.contains("t.json") && m.contains("JSON"), "{m}");
    let e =
        check("--jobs", "x.csv", Kind::CSV_OR_JSON_LINES, Some(("--jobs-format jsonl", Format::JsonLines)))
            .unwrap_err();
    assert!(matches!(e, Refusal::Disagrees { .. }));
    let m = e.to_string();
    assert!(m.contains("--jobs-format jsonl") && m.contains("--jobs") && m.contains("x.csv"), "{m}");
    assert!(m.contains("name the file .jsonl"), "{m}");
    // What is accepted, and in which format.
    assert_eq!(check("--gantt", "g.png", Kind::IMAGE, None).unwrap(), Format::Png);
    assert_eq!(check("--svg", "f", Kind::IMAGE, None).unwrap(), Format::Svg);
    assert_eq!(check("--jobs", "j.JSONL", Kind::CSV_OR_JSON_LINES, None).unwrap(), Format::JsonLines);
    let flag = Some(("--jobs-format jsonl", Format::JsonLines));
    assert_eq!(check("--jobs", "j", Kind::CSV_OR_JSON_LINES, flag).unwrap(), Format::JsonLines);
    assert_eq!(check("--trace", "t.out", Kind::TRACE, None).unwrap(), Format::Trace);
}

#[test]
fn a_path_that_cannot_be_reached_is_said_first_then_a_collision_then_a_name() {
    let d = scratch();
    let a = d.path().join("a.csv");
    let s = d.path().join("s.toml");
    fs::write(&s, "[machine]").unwrap();
    let unreachable = d.path().join("no").join("z.csv");
    let refusal = |outs: &[&Path]| plan(outs, &[&s]).unwrap_err();
    assert!(matches!(refusal(&[&a, &a, &unreachable]), Refusal::Unwritable { .. }));
    assert!(matches!(refusal(&[&a, &a, &d.path().join("z.png")]), Refusal::SameOutput { .. }));
    // An output onto the scenario is said as such, though its name also claims TOML.
    assert!(matches!(refusal(&[&d.path().join("z.png"), &s]), Refusal::OutputIsInput { .. }));
    assert!(matches!(refusal(&[&a, &d.path().join("z.png")]), Refusal::Extension { .. }));
}

#[test]
fn directories_to_fill_must_be_directories_or_creatable() {
    let d = scratch();
    let dir = |p: &Path| {
        let mut plan = Plan::new();
        plan.directory("--out", p);
        plan.check()
    };
    dir(d.path()).unwrap();
    dir(&d.path().join("a").join("b")).unwrap();
    assert!(!d.path().join("a").exists(), "checking made the directory");
    let f = d.path().join("f");
    fs::write(&f, "").unwrap();
    let m = dir(&f).unwrap_err().to_string();
    assert!(m.contains("--out") && m.contains("Not a directory"), "{m}");
    let m = dir(&f.join("under")).unwrap_err().to_string();
    assert!(m.contains("Not a directory"), "{m}");
    let m = dir(Path::new("/sys/outputs-test")).unwrap_err().to_string();
    assert!(m.contains("/sys/outputs-test") && m.contains("Permission denied"), "{m}");
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn the_wrote_line_is_the_same_for_every_tool() {
    assert_eq!(wrote_line(Path::new("a/t.trace"), ""), "wrote a/t.trace");
    assert_eq!(wrote_line(Path::new("j.csv"), "12 rows"), "wrote j.csv (12 rows)");
}

#[test]
fn write_errors_name_the_file() {
    let d = scratch();
    let mut p = Plan::new();
    let s = p.output("--out", Some(&d.path().join("x.csv")), Kind::CSV);
    let out = p.check().unwrap();
    let o = out.get(s).unwrap();
    fs::create_dir(o.path()).unwrap();
    let e = o.write(b"x").unwrap_err().to_string();
    assert!(e.starts_with(&format!("creating {}: ", o.path().display())), "{e}");
    let e = o.write_error(io::Error::other("disk on fire")).to_string();
    assert_eq!(e, format!("writing {}: disk on fire", o.path().display()));
    let mut p = Plan::new();
    let full = p.output("--out", Some(Path::new("/dev/full")), Kind::CSV);
    let out = p.check().unwrap();
    let e = out.get(full).unwrap().write(b"x").unwrap_err().to_string();
    assert!(e.starts_with("writing /dev/full: ") && e.contains("No space"), "{e}");
}

mod aliasing {
    //! Paths that name a few files in many ways (plain, `./`, `sub/..`, a symbolic link, a chain of
    //! two, a hard link), some of the files existing and some not: the planner refuses exactly
    //! when two outputs, or an output and an input, name the same file.

    use super::*;
    use proptest::prelude::*;

    /// Files 0..3 exist, 3..6 do not.
    const FILES: usize = 6;
    const EXISTING: usize = 3;

    fn name(f: usize) -> String {
        format!("f{f}.csv")
    }

    /// The directory: the files that exist, a link `s{f}.csv` to every file, a link `t{f}.csv` to
    /// that link, a hard link `h{f}.csv` to every file that exists, and `sub/`.
    fn lay_out(dir: &Path) {
        fs::create_dir(dir.join("sub")).unwrap();
        for f in 0..FILES {
            if f < EXISTING {
                fs::write(dir.join(name(f)), format!("content {f}")).unwrap();
                fs::hard_link(dir.join(name(f)), dir.join(format!("h{f}.csv"))).unwrap();
            }
            symlink(name(f), dir.join(format!("s{f}.csv"))).unwrap();
            symlink(dir.join(format!("s{f}.csv")), dir.join(format!("t{f}.csv"))).unwrap();
        }
    }

    /// Path of file `f` in the way `how`.
    fn path(dir: &Path, f: usize, how: usize) -> PathBuf {
        match how {
            0 => dir.join(name(f)),
            1 => dir.join(".").join(name(f)),
            2 => dir.join("sub").join("..").join(name(f)),
            3 => dir.join(format!("s{f}.csv")),
            4 => dir.join(format!("t{f}.csv")),
            _ if f < EXISTING => dir.join(format!("h{f}.csv")),
            _ => dir.join(".").join(".").join(name(f)),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn refused_exactly_when_two_paths_name_the_same_file(
            outputs in prop::collection::vec((0..FILES, 0..6usize), 1..6),
            inputs in prop::collection::vec((0..EXISTING, 0..6usize), 0..3),
        ) {
            let d = scratch();
            lay_out(d.path());
            let outs: Vec<PathBuf> = outputs.iter().map(|&(f, how)| path(d.path(), f, how)).collect();
            let ins: Vec<PathBuf> = inputs.iter().map(|&(f, how)| path(d.path(), f, how)).collect();
            let mut files: Vec<usize> = outputs.iter().map(|o| o.0).collect();
            files.sort_unstable();
            let outputs_collide = files.windows(2).any(|w| w[0] == w[1]);
            let onto_input = inputs.iter().any(|i| outputs.iter().any(|o| o.0 == i.0));
            let o: Vec<&Path> = outs.iter().map(PathBuf::as_path).collect();
            let i: Vec<&Path> = ins.iter().map(PathBuf::as_path).collect();
            match plan(&o, &i) {
                Ok(_) => prop_assert!(!outputs_collide && !onto_input, "passed: {o:?} {i:?}"),
                Err(Refusal::SameOutput { .. }) => prop_assert!(outputs_collide, "{o:?}"),
                Err(Refusal::OutputIsInput { .. }) => {
                    prop_assert!(onto_input && !outputs_collide, "{o:?} {i:?}")
                }
                Err(e) => prop_assert!(false, "refused for another reason: {e}"),
            }
            // Nothing was written, emptied or left behind.
            for f in 0..FILES {
                let p = d.path().join(name(f));
                if f < EXISTING {
                    prop_assert_eq!(fs::read_to_string(&p).unwrap(), format!("content {f}"));
                } else {
                    prop_assert!(!p.exists());
                }
            }
        }
    }
}
