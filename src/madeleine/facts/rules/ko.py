"""Korean surface forms for the rule extractor: vocabularies and fact patterns (dates are
read by the date engine, ``madeleine.text.dates``).

Korean marks roles with particles glued to the word ("지수가", "서울로", "땅콩에"), so the
patterns capture the bare word before a particle and the predicate after it ("좋아해요",
"살아요", "이사했어요"). Negation and the past sit in the predicate ("살지 않아요",
"살았어요"), so a pattern that spells out the affirmative present does not match them.
Values are kept as said, except closed vocabularies (seats, diets, relations, places) that map
to the English canonical forms other code relies on ("창가" → window, "딸" → daughter).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from madeleine.facts.rules.tables import PLACEHOLDER, table

# --------------------------------------------------------------------- vocabularies

RELATIONS = table(
    """daughter: 딸, 딸아이, 큰딸, 작은딸, 막내딸; son: 아들, 큰아들, 작은아들, 막내아들;
    wife: 아내, 와이프, 부인, 집사람; husband: 남편, 신랑; mother: 엄마, 어머니, 어머님;
    father: 아빠, 아버지, 아버님; sister: 언니, 누나, 여동생; brother: 오빠, 형, 남동생;
    sibling: 동생; grandmother: 할머니; grandfather: 할아버지; granddaughter: 손녀;
    grandson: 손자; aunt: 이모, 고모; uncle: 삼촌, 외삼촌, 큰아버지, 작은아버지;
    cousin: 사촌; niece_or_nephew: 조카; friend: 친구; best_friend: 절친, 베프;
    boyfriend: 남자친구, 남자 친구, 남친; girlfriend: 여자친구, 여자 친구, 여친;
    fiance: 약혼자, 약혼녀; boss: 사장님, 사장; manager: 상사, 팀장님, 팀장, 부장님, 부장;
    colleague: 동료, 직장 동료; roommate: 룸메이트; mother_in_law: 시어머니, 장모님, 장모;
    father_in_law: 시아버지, 장인어른, 장인; child: 아이, 애기, 아기, 막내""",
    canonical_is_alias=False,
)
SEATS = table("window: 창가, 창문 쪽, 창문쪽, 창측; aisle: 통로, 복도; exit row: 비상구", False)
DIETS = table(
    """vegetarian: 채식주의자, 채식주의, 채식, 베지테리언, 베지터리언, 락토 오보, 락토오보;
    vegan: 비건; pescatarian: 페스코, 페스코 베지테리언; halal: 할랄; kosher: 코셔;
    gluten-free: 글루텐 프리, 글루텐프리; keto: 키토, 저탄고지; vegetarian: 고기, 육류""",
    canonical_is_alias=False,
)
# Korean place name -> (canonical English name, country)
_PLACE_SPEC = """Japan: 도쿄=Tokyo, 동경=Tokyo, 오사카=Osaka, 교토=Kyoto, 후쿠오카=Fukuoka,
    삿포로=Sapporo, 오키나와=Okinawa, 나고야=Nagoya, 요코하마=Yokohama, 일본=Japan;
    South Korea: 서울=Seoul, 부산=Busan, 인천=Incheon, 제주도=Jeju, 제주=Jeju, 대구=Daegu,
    대전=Daejeon, 광주=Gwangju, 울산=Ulsan, 수원=Suwon, 성남=Seongnam, 강릉=Gangneung,
    경주=Gyeongju, 여수=Yeosu, 속초=Sokcho, 전주=Jeonju, 춘천=Chuncheon, 포항=Pohang,
    창원=Changwon, 판교=Pangyo, 분당=Bundang, 일산=Ilsan, 세종=Sejong, 청주=Cheongju,
    천안=Cheonan, 용인=Yongin, 고양=Goyang, 한국=South Korea;
    China: 베이징=Beijing, 북경=Beijing, 상하이=Shanghai, 상해=Shanghai, 홍콩=Hong Kong,
    선전=Shenzhen, 광저우=Guangzhou, 칭다오=Qingdao, 중국=China;
    Taiwan: 타이베이=Taipei, 대만=Taiwan; Thailand: 방콕=Bangkok, 푸켓=Phuket,
    치앙마이=Chiang Mai, 태국=Thailand; Singapore: 싱가포르=Singapore, 싱가폴=Singapore;
    Vietnam: 하노이=Hanoi, 다낭=Da Nang, 호치민=Ho Chi Minh City, 나트랑=Nha Trang,
    베트남=Vietnam; Philippines: 세부=Cebu, 마닐라=Manila, 보라카이=Boracay,
    필리핀=Philippines; Malaysia: 쿠알라룸푸르=Kuala Lumpur, 말레이시아=Malaysia;
    Indonesia: 발리=Bali, 자카르타=Jakarta, 인도네시아=Indonesia;
    United Arab Emirates: 두바이=Dubai; Turkey: 이스탄불=Istanbul, 터키=Turkey,
    튀르키예=Turkey; United Kingdom: 런던=London, 영국=United Kingdom;
    France: 파리=Paris, 프랑스=France; Italy: 로마=Rome, 밀라노=Milan, 베네치아=Venice,
    피렌체=Florence, 이탈리아=Italy; Spain: 바르셀로나=Barcelona, 마드리드=Madrid,
    스페인=Spain; Portugal: 리스본=Lisbon, 포르투갈=Portugal;
    Netherlands: 암스테르담=Amsterdam, 네덜란드=Netherlands; Germany: 베를린=Berlin,
    뮌헨=Munich, 프랑크푸르트=Frankfurt, 독일=Germany; Switzerland: 취리히=Zurich,
    제네바=Geneva, 스위스=Switzerland; Czech Republic: 프라하=Prague;
    Hungary: 부다페스트=Budapest; Austria: 오스트리아=Austria;
    United States: 뉴욕=New York, 로스앤젤레스=Los Angeles, 엘에이=Los Angeles,
    샌프란시스코=San Francisco, 시애틀=Seattle, 시카고=Chicago, 보스턴=Boston,
    워싱턴=Washington, 라스베이거스=Las Vegas, 라스베가스=Las Vegas, 하와이=Hawaii,
    호놀룰루=Honolulu, 괌=Guam, 사이판=Saipan, 미국=United States;
    Canada: 밴쿠버=Vancouver, 토론토=Toronto, 캐나다=Canada;
    Australia: 시드니=Sydney, 멜버른=Melbourne, 호주=Australia;
    New Zealand: 오클랜드=Auckland, 뉴질랜드=New Zealand; Mexico: 멕시코=Mexico;
    Mongolia: 몽골=Mongolia; India: 인도=India"""
PLACES: dict[str, tuple[str, str]] = {
    alias.split("=")[0].strip(): (alias.split("=")[1].strip(), country.strip())
    for entry in _PLACE_SPEC.split(";")
    for country, aliases in [entry.split(":", 1)]
    for alias in aliases.split(",")
}
MEDICATIONS = frozenset(
    """아스피린 타이레놀 인슐린 메트포르민 아목시실린 페니실린 항생제 수면제 진통제 혈압약
    당뇨약 비타민 유산균 철분제 오메가3 멜라토닌 항우울제 갑상선약 피임약 소염제 스테로이드
    항히스타민제 이부프로펜 부루펜 위장약 신경안정제""".split()
)
APPOINTMENT_PLACES = table(
    """dentist: 치과; doctor: 병원, 내과, 의원; eye_doctor: 안과; dermatologist: 피부과;
    haircut: 미용실, 헤어샵; orthopedist: 정형외과; pediatrician: 소아과, 소아청소년과;
    ent: 이비인후과; gynecologist: 산부인과; vet: 동물병원; korean_medicine: 한의원;
    psychiatrist: 정신과, 정신건강의학과""",
    canonical_is_alias=False,
)
APPOINTMENT_NOUNS = table(
    """reservation: 예약; meetup: 약속; doctor: 진료, 진료 예약; checkup: 검진, 건강검진;
    interview: 면접; meeting: 회의, 미팅; class: 수업; consultation: 상담; procedure: 시술;
    surgery: 수술; test: 검사""",
    canonical_is_alias=False,
)
SWITCH_TOPICS = table(
    """phone_carrier: 통신사, 요금제; bank: 은행, 주거래 은행, 주거래은행; airline: 항공사;
    phone: 휴대폰, 핸드폰, 폰, 스마트폰; insurance: 보험, 보험사; gym: 헬스장;
    browser: 브라우저; laptop: 노트북; internet_provider: 인터넷; card: 카드""",
    canonical_is_alias=False,
)
BRAND_TOPICS = table(
    """phone_carrier: skt, kt, lg u+, lgu+, lg유플러스, 유플러스, 알뜰폰, sk텔레콤;
    bank: 카카오뱅크, 토스뱅크, 케이뱅크, 신한, 신한은행, 국민, 국민은행, kb국민은행, 우리은행,
    하나, 하나은행, 농협, 기업은행; airline: 대한항공, 아시아나, 제주항공, 진에어, 티웨이;
    phone: 아이폰, 갤럭시""",
    canonical_is_alias=False,
)
PROGRAMMES = table(
    """Korean Air SKYPASS: 대한항공 스카이패스, 스카이패스, 대한항공;
    Asiana Club: 아시아나 클럽, 아시아나클럽, 아시아나""",
    canonical_is_alias=False,
)
DOCUMENTS = table(
    "passport: 여권; drivers_license: 운전면허증, 운전면허, 면허증; id_card: 신분증; visa: 비자",
    canonical_is_alias=False,
)
# districts (구 / 동 / neighbourhoods) -> their city: "강남구에 살아요" refines Seoul
DISTRICTS: dict[str, str] = {
    district: city
    for city, names in (
        (
            "Seoul",
            """강남구 강남 서초구 서초 송파구 송파 마포구 마포 용산구 용산 종로구 종로 중구 성동구
            성수동 광진구 동대문구 중랑구 성북구 강북구 도봉구 노원구 은평구 서대문구 양천구
            강서구 구로구 금천구 영등포구 여의도 동작구 관악구 강동구 홍대 이태원 잠실 압구정
            청담동 신촌 목동 상암동 연남동 망원동 합정동 한남동 삼성동 역삼동 논현동""",
        ),
        ("Busan", "해운대구 해운대 수영구 광안리 서면 남포동 기장군 동래구 사하구 연제구"),
        ("Shanghai", "푸둥 푸동 푸시"),
        ("Tokyo", "시부야 신주쿠 롯폰기 긴자"),
        ("New York", "브루클린 맨해튼 맨하탄 퀸즈"),
    )
    for district in names.split()
}
# words that follow "제 딸" but are not names; topic words that open a sentence
NOT_NAMES = frozenset(
    """이름 친구 학교 생일 회사 선생님 결혼 유치원 어린이집 얘기 이야기 나이 사진 장난감 숙제
    시험 병원 담임 생각 취미 직업 전화 번호 때문 덕분 말로는 그리고 정말 진짜 요즘 지금 오늘
    내일 어제 항상 아직 벌써 올해 작년 내년 이번 다음 결혼식 졸업 입학 알레르기 여권 계좌
    이건 그건 저건 여기 거기 저기 이분 그분 얘가 걔가 한명 하나 둘 셋 방학 여행 출장 가족
    건강 차가 키가 몸이 때문에 회사에 학교에""".split()
)
TOPIC_WORDS = frozenset(
    """저는 전 나는 난 제가 내가 저도 나도 저희는 우리는 저 나 정말 진짜 요즘 원래 사실 특히
    그리고 그래서 근데 그런데 평소에 평소 항상 늘 너무 아주 또 요새 최근 최근에 지금 이제
    그냥 좀 제일 가장 되게 엄청 많이 완전 아마 혹시 아무래도""".split()
)
NOT_ITEMS = frozenset(
    """기분 날씨 컨디션 느낌 맛 분위기 생각 건강 상태 사이 이게 그게 저게 그거 이거 저거 다 그
    이 저 것 거 게 뭐 아무거나 둘 다 모두 전부 그런 이런 여기 거기 당신 너 선생님""".split()
)

# ------------------------------------------------------------------------ fragments


def _alternation(words: Iterable[str]) -> str:
    names = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(n).replace(r"\ ", r"\s*") for n in names)


_RELS = _alternation(RELATIONS)
_POSSESSOR = r"(?:제|저의|우리|내|나의|저희|울)"
_PARTICLE = (
    r"(?:이가|이는|이도|이랑|이를|이의|이한테|이하고|이와|가|는|은|이|를|을|도|랑|와|과|의|한테"
    r"|에게|하고|씨|님)"
)
_NAME = r"(?:[가-힣]{2,4}?|(?-i:[A-Z][a-z]+))"
_END = r"(?=[\s,.!?~)]|$)"
# after a name: a particle, or punctuation ("제 딸 지수가", "제 딸 지수,"), not a bare noun
# ("제 딸 땅콩 알레르기" names no one)
_NAMED = rf"(?:{_PARTICLE}{_END}|(?=\s*[,.!?~)]|$))"
_WORD = r"[가-힣A-Za-z0-9]"
# at most two words, lazily up to a particle; the first word carries no particle of its own
_NOUN = rf"(?<!{_WORD})(?:[가-힣A-Za-z]{_WORD}*(?<![을를가는도에이])\s+)?[가-힣A-Za-z]{_WORD}*?"
_ADV = (
    r"(?:(?:정말|진짜|너무|아주|엄청|되게|제일|가장|특히|많이|무척|꽤|참|완전|항상|늘|원래|별로)"
    r"\s*)*"
)
_PLACE = _alternation(PLACES)
_LOCAL_PLACE = rf"(?:{_PLACE}|(?<![가-힣])[가-힣]{{1,6}}(?:시|군|구|동|읍|면|도))"
_ID = (
    rf"(?P<value>{PLACEHOLDER}|\+?\d[\d\s-]{{3,}}\d"
    r"|(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{3,})"
)
# languages a user may be learning (``madeleine.facts.rules.learning``)
KOREAN_LANGUAGES = (
    "영어 스페인어 프랑스어 불어 독일어 이탈리아어 포르투갈어 일본어 일어 한국어 중국어 광둥어"
    " 러시아어 아랍어 힌디어 네덜란드어 스웨덴어 베트남어 태국어 인도네시아어 터키어 그리스어"
    " 라틴어 수어"
).split()
KO_LANGUAGE = "(?P<lang>" + "|".join(sorted(KOREAN_LANGUAGES, key=len, reverse=True)) + ")"
_TITLES = r"(?:부장|팀장|과장|차장|대리|실장|이사|상무|전무|본부장|센터장|사장)"
_COPULA = r"(?:이에요|예요|입니다|이야|야|이고|고|인데|이죠|죠|이라서|라서|이거든요|거든요)"
_ROLES = _alternation(
    """간호사 의사 치과의사 약사 교사 선생님 초등학교 교사 교수 강사 개발자 프로그래머 엔지니어
    디자이너 학생 대학생 대학원생 고등학생 회사원 직장인 변호사 회계사 세무사 공무원 요리사
    셰프 기자 연구원 마케터 기획자 주부 프리랜서 군인 경찰 소방관 작가 사업가 자영업자 은행원
    승무원 조종사 파일럿 간호조무사 물리치료사 사회복지사 번역가 통역사 배우 가수 유튜버
    의사선생님 데이터 과학자 판사 검사 한의사 수의사 건축가 사진작가 바리스타""".split()
)

_ROWS: list[tuple[str, str]] = [
    # ---- relationships
    (
        "relation",
        rf"{_POSSESSOR}\s*(?P<rel>{_RELS})\s+(?P<person>{_NAME}){_NAMED}",
    ),
    (
        "relation",
        rf"(?<![가-힣])(?P<person>{_NAME})(?:이는|이가|는|은|가|이)?\s*,?\s*{_POSSESSOR}\s*"
        rf"(?P<rel>{_RELS})(?:{_COPULA}|입니다)",
    ),
    (  # "요즘 일본어 공부해요", "스페인어 배우기 시작했어요" (not "일본어는 잠깐 쉬고")
        "learning",
        rf"(?<![가-힣]){KO_LANGUAGE}\s*(?:를|을|도)?\s*(?:열심히\s*|다시\s*|새로\s*)?"
        r"(?:공부(?:해|하고|하는\s*중|중|합니다|를\s*시작|\s*시작)|배우(?:고|는\s*중|기\s*시작)|배워"
        r"|배웁니다)",
    ),
    (  # "새 팀장은 박지훈 팀장님이에요", "우리 팀장님이 김 부장님인데"
        "relation",
        rf"(?:{_POSSESSOR}\s*)?(?:새\s*|새로\s*온\s*)?(?P<rel>{_RELS})(?:은|는|이|가)\s+"
        rf"(?P<person>[가-힣]{{2,4}}?|[가-힣]\s*{_TITLES})\s*(?:{_TITLES}\s*)?(?:님|씨)?\s*"
        r"(?:이에요|예요|입니다|이야|야|이고|인데|이래요|래요|이세요|세요|이시고|이신데)",
    ),
    (
        "relation",
        rf"(?P<rel>{_RELS})\s*(?:의\s*)?이름은\s*(?P<person>{_NAME})(?:{_COPULA}|이|라고|이라고)?"
        rf"{_END}",
    ),
    # ---- seats and diets
    (
        "seat",
        r"(?P<seat>창가|창문\s*쪽|창측|통로|복도|비상구)\s*(?:쪽\s*|측\s*)?(?:좌석|자리|석)"
        rf"(?:을|를|이|가|으로|로)?\s*{_ADV}(?:선호|좋아|원해|원합니다|부탁|주세요|해\s*줘|로\s*해"
        r"|잡아|예약해|편해|편하|나아|낫더라"
        r"|로\s*부탁|으로\s*부탁|앉)",
    ),
    (
        "seat",
        r"(?P<seat>창가|통로|복도)\s*(?:쪽|측)?\s*(?:좌석|자리)?\s*(?:에|으로|로)?\s*(?:앉는\s*(?:걸|것을|게)\s*"
        r"(?:좋아|선호)|앉아요|앉습니다)",
    ),
    (
        "diet",
        r"(?<![가-힣])(?P<diet>채식주의자|채식주의|채식|비건|베지테리언|베지터리언|페스코\s*베지테리언"
        r"|페스코|락토\s*오보|할랄|코셔|글루텐\s*프리|키토|저탄고지)\s*(?:이에요|예요|입니다|이야|야"
        r"|이라서|라서|이거든요|거든요|이고|인데|해요|합니다|하고\s*있|을\s*해요|를\s*해요|을\s*하고"
        r"|를\s*하고|식단(?:을|으로)?\s*(?:해요|하고|유지|지켜)|(?:\s*음식|식)?만\s*(?:먹|드))",
    ),
    ("diet", r"(?P<diet>고기|육류)(?:를|는|은|도)?\s*(?:안\s*먹|못\s*먹|먹지\s*않)"),
    # ---- identity documents and labelled identifiers
    (
        "document",
        r"(?P<doc>여권|운전\s*면허증?|면허증|신분증|비자)[^.!?\n]{0,40}?(?:만료|끝나|유효)",
    ),
    (
        "identifier",
        rf"(?<!{_WORD})(?P<label>(?:{_WORD}+\s+){{0,3}}?{_WORD}*?)(?P<noun>계좌\s*번호|계좌|회원\s*번호"
        r"|멤버십\s*번호|마일리지\s*번호|카드\s*번호|전화\s*번호|휴대폰\s*번호|핸드폰\s*번호|연락처"
        rf"|여권\s*번호|면허\s*번호|번호)\s*(?:는|은|가|이|:)?\s*{_ID}",
    ),
    (
        "email",
        rf"(?:이메일|메일|e-?mail)\s*(?:주소)?\s*(?:는|은|:)?\s*(?P<value>{PLACEHOLDER}"
        r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
    ),
    (
        "phone",
        rf"(?P<value>{PLACEHOLDER}|\+?\d[\d\s-]{{6,}}\d)\s*(?:으로|로|번으로)\s*(?:연락|전화|문자"
        r"|카톡)",
    ),
    (
        "address",
        r"(?:집\s*)?주소(?:는|은|:)\s*(?P<value>[^!?\n]{4,120}?)\s*(?:이에요|예요|입니다|$)",
    ),
    ("name", rf"(?:제|내|저의)\s*이름은\s*(?P<person>{_NAME})(?:{_COPULA}|이|라고|이라고){_END}"),
    (
        "greeting_name",
        r"^(?:안녕하세요[.!,~]*\s*)?(?P<person>[가-힣]{2,4}?)(?P<called>이라고|라고)\s*(?:해요|합니다"
        rf"|불러\s*주세요){_END}",
    ),
    (
        "employer",
        rf"(?<!{_WORD})(?P<org>[가-힣A-Za-z0-9&]+?)(?<!에)(?<!에서)(?:을|를)?\s+(?:다녀요|다닙니다"
        r"|다니고\s*있)",
    ),
    (
        "greeting_name",
        r"(?:^|안녕하세요[.!,~]*\s*|반갑습니다[.!,~]*\s*)(?:저는|전|제가|나는|난)\s*(?P<person>"
        r"[가-힣]{2,4}?)(?:(?P<called>이라고|라고)\s*(?:해요|합니다|하고요|불러\s*주세요)|이에요|예요"
        rf"|입니다|이야|야){_END}",
    ),
    (
        "birthday",
        r"생일(?:은|이)|(?:19|20)\d{2}\s*년\s*\d{1,2}\s*월\s*\d{1,2}\s*일\s*(?:에\s*)?태어",
    ),
    # ---- health
    (
        "allergy",
        rf"(?P<allergen>{_NOUN})\s*(?:에\s*(?:대한\s*)?|에\s*대해\s*)?(?:알레르기|알러지)\s*"
        r"(?:가|이|도)?\s*(?:있|심하|심해|생겼|반응|예요|이에요|입니다)",
    ),
    (
        "medication",
        rf"(?P<med>{_NOUN})\s*(?P<dose>\d+(?:\.\d+)?\s*(?:mg|밀리그램|mcg|ml|정|알))?\s*(?:을|를)?"
        r"\s*(?:(?:매일|하루에?\s*(?:한|두|세)\s*번|아침마다|저녁마다|꾸준히|계속)\s*)*"
        r"(?P<verb>복용\s*(?:하고\s*있|중|해요|합니다|하고\s*있습니다)|먹고\s*있|처방\s*받았|처방받았"
        r"|처방을\s*받았|맞고\s*있)",
    ),
    (
        "condition",
        r"(?<![가-힣])(?P<condition>천식|당뇨병|당뇨|고혈압|저혈압|고지혈증|빈혈|편두통|아토피|우울증"
        r"|공황장애|불안장애|불면증|관절염|류마티스\s*관절염|갑상선\s*기능\s*(?:저하|항진)증|심장병"
        r"|부정맥|비염|위염|역류성\s*식도염|허리\s*디스크|디스크|통풍|ADHD|adhd|뇌전증|간질"
        r"|유당\s*불내증|셀리악병)\s*(?:이|가|은|는|도)?\s*(?:있|심하|심해|생겼|환자|앓|진단)",
    ),
    (
        "condition",
        rf"(?P<condition>{_NOUN})\s*(?:이|가)?\s*(?:라는\s*)?(?:진단|판정)(?:을|를)?\s*받았",
    ),
    # ---- plans
    (
        "appointment",
        r"(?<![가-힣0-9])(?:(?P<what>[가-힣A-Za-z]+?)\s*)?(?P<noun>진료\s*예약|건강검진|예약|약속|진료"
        r"|검진|면접|회의|미팅|수업|상담|시술|수술|검사)\s*(?:이|가|은|도)?\s*(?:있|잡혀|잡혔|잡았|했어"
        r"|했습니다|해\s*뒀|해\s*놨)",
    ),
    (
        "appointment",
        r"(?<![가-힣0-9])(?:(?P<what>[가-힣A-Za-z]+?)\s*)?(?P<noun>진료\s*예약|건강검진|예약|약속|진료"
        r"|검진|면접|회의|미팅|수업|상담|시술|수술|검사)\s*(?:이|가|은|는)\s+(?=[^.!?]{0,30}?(?:\d+\s*시"
        r"|\d+\s*일|요일|내일|모레|오늘))",
    ),
    (
        "appointment",
        r"(?P<what>치과|병원|미용실|헤어샵|안과|피부과|내과|의원|한의원|정형외과|소아과|이비인후과"
        r"|산부인과|동물병원|정신과)\s*(?:에|을|를)?\s*(?:가요|갑니다|가야\s*(?:해|돼|합니다)"
        r"|갈\s*(?:거|예정)|방문|가기로)",
    ),
    (
        "trip_request",
        rf"(?P<dest>{_PLACE})(?:으로|로|에|행|까지)?\s*(?:가는|갈|떠나는|출발하는|향하는)?\s*"
        r"(?P<mode>비행기\s*표|비행기|항공권|항공편|비행편|기차표|기차|KTX|SRT|고속버스|버스|배편|페리"
        r"|호텔|숙소|여행|표|티켓)\s*(?:표|티켓|편)?\s*(?:를|을|좀|하나)?\s*(?:좀\s*)?(?:예약|예매"
        r"|알아봐|찾아|끊어|구해|잡아|검색)",
    ),
    (
        "trip",
        rf"(?P<dest>{_PLACE})(?:으로|로|에)\s*(?:(?P<mode>여행|출장|휴가|놀러|여행을|출장을|휴가를"
        r"|비행기\s*타고|기차\s*타고|차\s*타고)\s*)?(?:가요|갑니다|가려고|갈\s*(?:거|예정|계획)"
        r"|가기로|떠나요|떠납니다|떠날\s*(?:거|예정)|가게\s*(?:됐|되었)|날아가|가야\s*(?:해|돼))",
    ),
    (
        "trip",
        rf"(?P<dest>{_PLACE})\s*(?P<mode>여행|출장|휴가)(?:을|를|이|가)?\s*(?:가요|갑니다|계획"
        r"|예정|있어요|있습니다|잡혀|잡았|떠나|갈)",
    ),
    # ---- home, moves, work
    (
        "home",
        rf"(?P<place>{_LOCAL_PLACE})(?:에서|에)?\s*(?:살아요|살아|살고\s*있|삽니다|살거든|살아서"
        r"|살고요|살죠|살지요|거주하고\s*있|거주\s*중|거주합니다|거주해요)",
    ),
    (
        "home",
        rf"(?:집은|사는\s*곳은|거주지는)\s*(?P<place>{_LOCAL_PLACE})(?:이에요|예요|입니다|이야|야"
        r"|에\s*있)",
    ),
    (
        "moved",
        rf"(?P<place>{_LOCAL_PLACE})(?:으로|로)\s*(?:이사|이주|이전)\s*(?:를\s*)?(?:했|왔|갔|하게"
        r"\s*됐|해\s*왔|와서|가서)",
    ),
    (
        "employer",
        rf"(?<!{_WORD})(?P<org>[가-힣A-Za-z0-9&]+?)(?:에서|에)\s*(?:일하고\s*있|일해|일합니다"
        r"|일하는\s*중|근무\s*(?:하고\s*있|해|합니다|중)|다니고\s*있|다녀요|다닙니다)",
    ),
    (
        "role",
        rf"(?<![가-힣])(?P<role>{_ROLES})(?:이에요|예요|입니다|이야|야|로\s*일|으로\s*일|로\s*근무"
        r"|으로\s*근무|로\s*재직|으로\s*재직|이고|인데|이라서|라서)",
    ),
    (
        "employer",
        rf"(?<!{_WORD})(?P<org>[가-힣A-Za-z0-9&]+?)(?:에|으로|로)\s*(?:입사|이직)\s*(?:했|하게\s*됐"
        r"|해요|합니다|예정)",
    ),
    (
        "job",
        rf"(?<!{_WORD})(?P<org>[가-힣A-Za-z0-9&]+?)(?:에서|에)\s*(?P<role>(?:[가-힣A-Za-z]+\s+)?"
        r"[가-힣A-Za-z]+?)(?:으로|로)"
        r"\s*(?:일하고\s*있|일해|일합니다|일하는\s*중|근무|재직|입사|이직|일하게)",
    ),
    (
        "left_job",
        rf"(?:(?<!{_WORD})(?P<org>[가-힣A-Za-z0-9&]+?)(?:을|를|에서)?\s*)?(?:그만\s*뒀|그만\s*두었"
        r"|그만두게\s*됐|퇴사\s*(?:했|하게\s*됐|를\s*했)|퇴직\s*했|관뒀|때려\s*쳤)",
    ),
    # ---- plans to move, cancellations, things given up
    (
        "plan_move",
        rf"(?P<dest>{_LOCAL_PLACE})(?:으로|로)\s*(?:이사|이주|이전)\s*(?:를\s*|을\s*)?(?:가요|갑니다"
        r"|가려고|갈\s*(?:거|예정|계획)|가기로|할\s*(?:거|예정|계획)|하려고|하기로|해요|합니다"
        r"|예정|계획)",
    ),
    (
        "cancel",
        r"(?<![가-힣0-9])(?:(?P<what>[가-힣A-Za-z]+?)\s*)?(?P<noun>진료\s*예약|건강검진|예약|약속"
        r"|진료|검진|면접|회의|미팅|수업|상담|시술|수술|검사|여행|출장|휴가|이사)(?:\s*(?:계획|일정|예약|표))?"
        r"\s*(?:을|를|이|가|은|는|도)?\s*(?:취소|캔슬)\s*(?:했|됐|되었|하게\s*됐|해야)",
    ),
    (
        "avoid",
        rf"(?P<item>{_NOUN})\s*(?:을|를|은|는)?\s*(?:끊었|끊기로|끊은\s*지|그만\s*(?:먹|마시|피우)"
        r"(?:기로|었|었어|ㅆ)?|안\s*(?:먹|마시)기로|먹지\s*않기로|마시지\s*않기로)",
    ),
    (
        "switch",
        r"(?<![가-힣A-Za-z0-9])(?P<old>[가-힣A-Za-z0-9]+?)\s*대신(?:에)?\s*(?P<value>[가-힣A-Za-z0-9]+?)"
        r"(?:을|를|으로|로)?\s*(?:마셔요|마십니다|마시고\s*있|먹어요|먹습니다|먹고\s*있|써요|씁니다"
        r"|쓰고\s*있|사용해요|사용합니다|타요|타고\s*다녀요|이용해요)",
    ),
    (
        "habit",
        r"(?P<when>매일(?:\s*아침|\s*저녁)?|아침마다|저녁마다|주로|보통|항상|늘)\s*"
        r"(?P<value>[가-힣A-Za-z]+?)(?:을|를)?\s*(?P<verb>마셔요|마십니다|마셔|마시고|먹어요|먹습니다|먹고|타요|탑니다|타고)",
    ),
    # ---- switches and instructions
    (
        "switch",
        r"(?:(?P<topic>주거래\s*은행|통신사|은행|항공사|휴대폰|핸드폰|스마트폰|폰|카드|보험사|보험"
        r"|요금제|헬스장|브라우저|노트북|인터넷)(?:를|을|도)?\s*)?(?:(?<![가-힣A-Za-z0-9])"
        r"(?P<old>[가-힣A-Za-z0-9+&\-]+?)에서\s*)?(?<![가-힣A-Za-z0-9])"
        r"(?P<value>[가-힣A-Za-z0-9+&\-]+?(?:\s+[A-Za-z0-9+&\-]+)?)(?:으로|로)\s*(?:바꿨|갈아탔"
        r"|변경했|옮겼|바꾸었|전환했)",
    ),
    (
        "instruction",
        r"(?P<instruction>(?:앞으로(?:는)?|항상|늘|언제나|절대(?:로)?|무조건)\s*[^.!?\n]{2,100}?"
        r"(?:해\s*줘|해\s*주세요|해\s*주십시오|하지\s*마(?:세요)?|하지\s*말아\s*(?:줘|주세요)"
        r"|주세요|줘|마세요))",
    ),
    # ---- likes and dislikes (generic)
    (
        "dislike",
        rf"(?P<item>{_NOUN})\s*(?:을|를|은|는)\s*{_ADV}(?:안\s*좋아해|안\s*좋아합니다|좋아하지\s*않"
        r"|싫어해|싫어합니다|싫어하는\s*편|질색|못\s*먹어)",
    ),
    ("dislike", rf"(?P<item>{_NOUN})\s*(?:이|가|은|는)\s*{_ADV}(?:싫어요|싫습니다|별로예요|질색)"),
    (
        "like",
        rf"(?P<item>{_NOUN})\s*(?:을|를|은|는)\s*{_ADV}(?:좋아해|좋아합니다|좋아하는\s*편|좋아하거든"
        r"|선호해"
        r"|선호합니다"
        r"|사랑해|사랑합니다|즐겨\s*(?:먹|마시|들|봐|보|해|합니다|찾))",
    ),
    ("like", rf"(?P<item>{_NOUN})\s*(?:이|가)\s*{_ADV}(?:좋아요|좋습니다|최고예요|최고야)"),
]

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.I)) for kind, pattern in _ROWS
)

QUESTION_END = re.compile(
    r"(?:까요|나요|니|냐|는지|을까|할까|될까|어때|어떨까|어때요|인가요|건가요|는가요|을까요|ㄹ까)"
    r"\s*[.!~]*\s*$|\?\s*$"
)
REQUEST = re.compile(
    r"해\s*줘|해\s*주세요|해\s*줄\s*수|해\s*주실\s*수|부탁|주세요|줄래|주실래요|알아봐"
)
HEDGE = re.compile(
    r"아마|것\s*같아|거\s*같아|것\s*같습니다|듯해|듯합니다|잘\s*모르겠|확실하지\s*않"
)
HYPOTHETICAL = re.compile(r"만약|만일|고민\s*중|생각\s*중|할지|인지\s*모르")

# relation mention or first-person topic, to find who a Korean clause is about
SUBJECT = re.compile(
    rf"{_POSSESSOR}\s*(?P<rel>{_RELS})(?:\s+(?P<person>{_NAME}){_NAMED}|{_PARTICLE}?{_END})"
    r"|(?P<me>(?<![가-힣])(?:저는|전|나는|난|제가|내가|저도|나도|저희는|우리는)(?![가-힣]))"
)
PARTICLE_TAIL = re.compile(rf"{_PARTICLE}$")


def given_name(word: str, sentence: str, called: bool = False) -> str | None:
    """A Korean given name said in an introduction, or None: with "라고 해요" (the user says
    it is what they are called) any word that is not a role or common word; with a bare
    copula ("저는 민수예요") only a word MeCab-ko tags as a person's name."""
    from madeleine.facts.rules.ko_morph import person_names

    if (
        word in NOT_NAMES
        or word in TOPIC_WORDS
        or word in NOT_ITEMS
        or word in PLACES
        or word in DISTRICTS
        or re.fullmatch(_ROLES, word)
        or word in RELATIONS
    ):
        return None
    if called:
        return word
    names = person_names(sentence)
    return word if names is not None and word in names else None


def strip_particle(word: str) -> str:
    """Drop a trailing particle ("지수가" → "지수"); a one-syllable remainder means the
    ending was part of the name."""
    stripped = PARTICLE_TAIL.sub("", word)
    return stripped if len(stripped) >= 2 else word


def has_final_n(word: str) -> bool:
    """Whether the last syllable ends in ㄴ: the mark of an adjective before a noun ("매운")."""
    code = ord(word[-1]) - 0xAC00 if word else -1
    return 0 <= code < 11172 and code % 28 == 4
