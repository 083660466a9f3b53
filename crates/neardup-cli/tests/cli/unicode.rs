//! Unicode text: normalization, word shingles in scripts without spaces, short documents.

use crate::common::*;

#[test]
fn sim_of_nfd_and_full_width_text_is_one() {
    let nfc = "Perché è così città più";
    let nfd = "Perche\u{301} e\u{300} cosi\u{300} citta\u{300} piu\u{300}";
    assert_eq!(unicode_sim(nfc, nfd, &[]), 1.0);
    assert_eq!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &[]), 1.0);
    assert_eq!(
        unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--shingle", "word:2"]),
        1.0
    );
    // basic is the old behaviour; none and --no-normalize keep everything.
    assert!(unicode_sim(nfc, nfd, &["--normalize", "basic"]) < 0.5);
    assert!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--normalize", "none"]) < 0.5);
    assert!(unicode_sim("ＡＩ技術１２３％", "AI技術123%", &["--no-normalize"]) < 0.5);
    // aggressive folds accents and removes punctuation.
    let plain = "Perche e cosi citta piu";
    assert!(unicode_sim(nfc, plain, &[]) < 1.0);
    assert_eq!(
        unicode_sim(
            "«Perché», è così città più!",
            plain,
            &["--normalize", "aggressive"]
        ),
        1.0
    );
    // The two spellings of none conflict only when both are given.
    let o = neardup(&["sim", "a", "b", "--no-normalize", "--normalize", "basic"]);
    assert_eq!(o.status.code(), Some(2));
    let o = neardup(&["sim", "a", "b", "--normalize", "nfd"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn word_shingles_find_chinese_japanese_and_thai_near_duplicates() {
    let jsonl = "{\"id\":\"zh1\",\"text\":\"今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天，一直到太阳下山才回家。\"}\n\
                 {\"id\":\"ja1\",\"text\":\"東京タワーの近くにある小さなレストランで、友達と一緒に晩ご飯を食べました。とても美味しかったです。\"}\n\
                 {\"id\":\"th1\",\"text\":\"วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับเพื่อนแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ\"}\n\
                 {\"id\":\"zh2\",\"text\":\"今天天气很好，我们一起去公园散步，然后在河边喝咖啡聊天，一直到太阳下山才回家。\"}\n\
                 {\"id\":\"ja2\",\"text\":\"東京タワーの近くにある小さなレストランで、家族と一緒に晩ご飯を食べました。とても美味しかったです。\"}\n\
                 {\"id\":\"th2\",\"text\":\"วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับน้องแล้วกินข้าวเย็นด้วยกันที่ร้านอาหารริมแม่น้ำ\"}\n";
    for shingle in ["word:3", "char:3"] {
        let o = neardup_stdin(&["pairs", "-", "--shingle", shingle, "-t", "0.6"], jsonl);
        assert!(o.status.success(), "{}", stderr(&o));
        let pairs: Vec<(String, String)> = json_lines(&stdout(&o))
            .iter()
            .map(|p| {
                (
                    p["a"].as_str().unwrap().into(),
                    p["b"].as_str().unwrap().into(),
                )
            })
            .collect();
        let expected = [("zh1", "zh2"), ("ja1", "ja2"), ("th1", "th2")];
        assert_eq!(pairs.len(), 3, "{shingle}: {pairs:?}");
        for (a, b) in expected {
            assert!(
                pairs.contains(&(a.into(), b.into())),
                "{shingle}: {pairs:?}"
            );
        }
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
        assert!(stderr(&o).contains("normalization nfkc"), "{}", stderr(&o));
    }
}

#[test]
fn documents_shorter_than_k_are_warned_about() {
    let texts = "one two\nthree four\nfive six\nseven eight nine ten\n";
    let o = neardup_stdin(&["pairs", "-", "--shingle", "word:3"], texts);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning"), "{err}");
    assert!(
        err.contains("3 of 4 documents have fewer than 3 words"),
        "{err}"
    );
    let o = neardup_stdin(&["pairs", "-", "--shingle", "word:2"], texts);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // plan's sample estimate says it too.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.txt");
    std::fs::write(&path, texts).unwrap();
    let o = neardup(&["plan", path.to_str().unwrap(), "--shingle", "word:3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("fewer than 3 words"), "{all}");
}
