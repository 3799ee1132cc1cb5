//! A deterministic JSON corpus shaped like `city.json` (the zstd-ruby benchmarks' sample):
//! GeoJSON-like place records with Japanese names, so bb-zstd runs on a fresh board with
//! no input file, with a similar compression ratio, the same bytes for the same seed.

use crate::util::rng::Rng;

/// The size of the original `city.json`, and so of the corpus bb-zstd generates by default.
pub const CITY_JSON_SIZE: u64 = 1_779_136;

const PREFECTURES: [&str; 12] = [
    "北海道",
    "青森県",
    "宮城県",
    "東京都",
    "神奈川県",
    "愛知県",
    "京都府",
    "大阪府",
    "兵庫県",
    "広島県",
    "福岡県",
    "沖縄県",
];
const KANJI: &str = "札幌中央北東西南白石豊平清田手稲厚別函館小樽旭川室蘭釧路帯広夕張岩見沢網走留萌苫牧稚内美唄芦紋別士江剣淵\
                     青森弘前八戸黒石五所原十和田三沢むつ仙台石巻塩竈気沼名取角岡山大和松島千代新宿品川目黒世谷渋野杉並豊島\
                     練馬足立葛飾戸横浜崎相模原須賀鎌倉藤沢茅ヶ平塚秦瀬古屋豊橋瀬津京都福知舞鶴綾部宇治宮亀城陽向日長岡八幡";
const NE_CLASSES: [&str; 4] = [
    "市区町村/政令市",
    "市区町村/区",
    "市区町村/市",
    "市区町村/町",
];
const SUFFIXES: [&str; 4] = ["市", "区", "町", "村"];
const DIGITS: [&str; 10] = ["０", "１", "２", "３", "４", "５", "６", "７", "８", "９"];

/// Generates about `size` bytes (never more) of JSON: an array of place records.
pub fn generate(size: usize, seed: u64) -> Vec<u8> {
    let kanji: Vec<char> = KANJI.chars().collect();
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 1024);
    out.push_str("[\n");
    let mut entry_id = 576u64;
    let mut city = String::from("札幌");
    let mut prefecture = PREFECTURES[0];
    loop {
        if rng.below(8) == 0 {
            prefecture = PREFECTURES[rng.below(PREFECTURES.len() as u64) as usize];
            city = name(&mut rng, &kanji);
        }
        let class = rng.below(NE_CLASSES.len() as u64) as usize;
        let body = name(&mut rng, &kanji);
        let suffix = SUFFIXES[class];
        let surface = format!("{body}{suffix}");
        let code = 11000 + rng.below(38000);
        let number = |rng: &mut Rng| -> String {
            (0..1 + rng.below(2))
                .map(|_| DIGITS[rng.below(10) as usize])
                .collect()
        };
        let record = format!(
            "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"Point\",\"coordinates\":[{:.5},{:.5}]}},\
             \"properties\":{{\"surface\":\"{surface}\",\"body\":\"{body}\",\"hypernym\":\"{prefecture}/{city}市\",\
             \"entry_id\":{entry_id},\"code\":\"lasdec:{code:06}/jisx0402:{:05}\",\"address_level\":{},\
             \"ne_class\":\"{}\",\"suffix\":\"{suffix}/\",\"prefix\":\"\",\"address\":\"{city}市{surface}{}条{}丁目\",\
             \"note\":\"\",\"altnames\":[\"{body}\",\"{surface}\"]}}}}",
            127.0 + rng.unit() * 19.0,
            26.0 + rng.unit() * 19.0,
            code / 10,
            3 + class.min(1),
            NE_CLASSES[class],
            number(&mut rng),
            number(&mut rng),
        );
        let separator = if entry_id == 576 { "" } else { ",\n" };
        if out.len() + separator.len() + record.len() + 3 > size {
            break;
        }
        out.push_str(separator);
        out.push_str(&record);
        entry_id += 1;
    }
    out.push_str("\n]\n");
    out.into_bytes()
}

fn name(rng: &mut Rng, kanji: &[char]) -> String {
    (0..2 + rng.below(2))
        .map(|_| kanji[rng.below(kanji.len() as u64) as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_valid_json_of_the_asked_size() {
        let a = generate(200_000, 1);
        assert_eq!(a, generate(200_000, 1));
        assert_ne!(a, generate(200_000, 2));
        assert!(a.len() <= 200_000 && a.len() > 199_000, "{}", a.len());
        let text = std::str::from_utf8(&a).unwrap();
        let v = crate::util::json::Json::parse(text).unwrap();
        let first = &v.as_array().unwrap()[0];
        assert_eq!(first.get("type").unwrap().as_str(), Some("Feature"));
        assert!(text.contains("市"), "non-ASCII text like city.json");
    }
}
