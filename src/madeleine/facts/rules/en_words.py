"""English vocabularies of the rule extractor: closed word lists that map what was said to
the canonical values other code relies on (relations, diets, seats, places, drugs, roles).
Pure data; the patterns that use them are in ``en``."""

from __future__ import annotations

import re

from madeleine.facts.rules.tables import table

# surface -> canonical relation (the key suffix of relationship.<relation>)
RELATIONS = table(
    """daughter:; son:; wife:; husband:; partner:; spouse:; boyfriend:; girlfriend:;
    fiance: fiancee, fiancé, fiancée; mother: mom, mum, mommy, mama;
    father: dad, daddy, papa; sister: older sister, younger sister, little sister, big sister,
    baby sister, twin sister; brother: older brother, younger brother, little brother,
    big brother, baby brother, twin brother; grandmother: grandma, granny;
    grandfather: grandpa; granddaughter:; grandson:; aunt:; uncle:; cousin:; niece:; nephew:;
    best_friend: best friend; friend:; manager: boss, supervisor, line manager;
    colleague: coworker, co-worker;
    roommate: flatmate; neighbor: neighbour; child: kid, baby, oldest, youngest, eldest;
    stepson:; stepdaughter:; stepmother:; stepfather:; mother_in_law: mother-in-law;
    father_in_law: father-in-law; sister_in_law: sister-in-law;
    brother_in_law: brother-in-law; son_in_law: son-in-law;
    daughter_in_law: daughter-in-law; ex_wife: ex-wife; ex_husband: ex-husband; ex:;
    therapist:; doctor:; dentist:; assistant:; teacher:"""
)
DIETS = table(
    """vegetarian: veggie, lacto-ovo vegetarian, lacto-ovo, meat, any meat; vegan: plant-based,
    plant based, animal products; pescatarian: pescetarian; halal:; kosher:;
    gluten-free: gluten free; dairy-free: dairy free; lactose-free: lactose free;
    keto: ketogenic; paleo:; flexitarian:; low-carb: low carb"""
)
SEATS = table("window:; aisle:; middle:; exit row: exit-row; front row: front-row; bulkhead:")

# words naming a medical condition after "I have …"
CONDITIONS = (
    "type 1 diabetes|type 2 diabetes|type one diabetes|type two diabetes|diabetes|asthma"
    "|hypertension|high blood pressure|low blood pressure|high cholesterol|celiac disease"
    "|coeliac disease|celiac|migraines?|epilepsy|rheumatoid arthritis|arthritis|adhd"
    "|autism|depression|an anxiety disorder|anxiety|eczema|psoriasis|ibs|crohn's disease"
    "|crohn's|ulcerative colitis|lupus|copd|insomnia|sleep apnea|glaucoma|a heart condition"
    "|heart disease|a heart murmur|fibromyalgia|ptsd|ocd|bipolar disorder|multiple sclerosis"
    "|parkinson's|cancer|kidney disease|hypothyroidism|hyperthyroidism|gout|gerd|acid reflux"
    "|vertigo|tinnitus|long covid|chronic pain|back pain|a bad back|scoliosis|anemia|anaemia"
    "|dyslexia|a pacemaker|hemophilia|sickle cell disease|endometriosis|pcos|osteoporosis"
)
CONDITION_ADJECTIVES = table(
    """diabetes: diabetic; asthma: asthmatic; epilepsy: epileptic; anemia: anemic, anaemic;
    lactose intolerance: lactose intolerant, lactose-intolerant;
    gluten intolerance: gluten intolerant; celiac disease: celiac, coeliac;
    color blindness: colorblind, color-blind, colour-blind, colourblind;
    hypertension: hypertensive; dyslexia: dyslexic; pregnancy: pregnant; deafness: deaf;
    hearing loss: hard of hearing"""
)

# well-known drugs and families; generic drug names are also caught by their suffixes
MEDICATIONS = frozenset(
    """ibuprofen aspirin acetaminophen paracetamol tylenol advil motrin aleve naproxen insulin
    metformin amoxicillin penicillin lisinopril atorvastatin simvastatin levothyroxine
    synthroid albuterol omeprazole sertraline zoloft prozac fluoxetine lexapro escitalopram
    adderall ritalin warfarin eliquis prednisone birth control antibiotics antidepressants
    melatonin vitamin vitamins iron supplements inhaler epipen antihistamines zyrtec claritin
    allegra benadryl xanax valium ozempic wegovy methotrexate humira lithium gabapentin
    tramadol hydrocodone oxycodone codeine statins blood thinners chemo chemotherapy""".split()
)
MEDICATION_SUFFIX = re.compile(
    r"(?:cillin|mycin|cycline|floxacin|pril|sartan|olol|dipine|statin|prazole|tidine|formin"
    r"|gliptin|glitazone|azepam|zolam|oxetine|aline|pramine|triptan|profen|coxib|sone|olone"
    r"|thyroxine|mab|nib|vir|azole|parin|xaban|gatran|tropin|terol|lukast|dronate|setron"
    r"|barb|pine|done)$",
    re.I,
)

ROLES = (
    "nurse|doctor|physician|surgeon|dentist|pharmacist|therapist|psychologist|teacher"
    "|professor|lecturer|tutor|student|engineer|developer|programmer|designer|architect"
    "|manager|director|consultant|analyst|accountant|lawyer|attorney|paralegal|journalist"
    "|writer|editor|author|artist|musician|photographer|chef|cook|baker|waiter|waitress"
    "|bartender|barista|pilot|flight attendant|firefighter|police officer|officer|soldier"
    "|scientist|researcher|economist|banker|entrepreneur|founder|ceo|cto|cfo|coo|freelancer"
    "|contractor|electrician|plumber|carpenter|mechanic|driver|farmer|vet|veterinarian"
    "|paramedic|librarian|translator|interpreter|salesperson|sales rep|recruiter|marketer"
    "|product manager|project manager|data scientist|intern|secretary|receptionist|cashier"
    "|clerk|real estate agent|realtor|social worker|caregiver|nanny|homemaker|housewife"
    "|stay-at-home mom|stay-at-home dad|retiree|coach|trainer|personal trainer|dancer|actor"
    "|actress|producer|youtuber|streamer|civil servant|government employee|professional"
    "|pm|sre|devops engineer|qa engineer|ux designer|ui designer|tech lead|team lead"
    "|engineering manager|staff engineer|principal engineer|software developer"
)

# topic words that name what a "switched to" changed; brands that imply a topic
SWITCH_TOPICS = table(
    """phone_carrier: carrier, carriers, phone carrier, mobile carrier, cell carrier,
    phone plan, mobile plan; provider: providers; bank: banks; airline: airlines;
    phone: phones; laptop: laptops; browser: browsers; insurance: insurer;
    gym: gyms; diet: diets; email_provider: email, email provider;
    internet_provider: internet, internet provider, isp; car: cars; editor: editors;
    coffee:"""
)
BRAND_TOPICS = table(
    """phone_carrier: t-mobile, verizon, at&t, sprint, mint mobile, google fi, visible,
    cricket, vodafone, skt, sk telecom, kt, lg u+; bank: chase, bank of america,
    wells fargo, citi, citibank, capital one, hsbc, barclays, ally, schwab; airline: united,
    delta, american airlines, southwest, jetblue, alaska airlines, korean air, asiana,
    lufthansa, emirates; phone: iphone, android, pixel, galaxy, samsung; browser: firefox,
    chrome, safari, brave; email_provider: gmail, outlook, proton mail, protonmail;
    editor: vs code, vscode, vim, neovim, emacs; laptop: mac, macbook;
    operating_system: linux, windows"""
)

# major cities -> country; lookups are case-insensitive
CITIES = table(
    """Japan: tokyo, osaka, kyoto, sapporo, fukuoka, okinawa, nagoya, yokohama;
    South Korea: seoul, busan, incheon, jeju, daegu, daejeon, gwangju;
    China: beijing, shanghai, shenzhen, guangzhou, chengdu, hangzhou, hong kong, macau;
    Taiwan: taipei; Thailand: bangkok, phuket, chiang mai; Singapore: singapore;
    Vietnam: hanoi, ho chi minh city, saigon, da nang, danang; Philippines: manila, cebu;
    Malaysia: kuala lumpur; Indonesia: jakarta, bali;
    India: mumbai, delhi, new delhi, bangalore, bengaluru;
    United Arab Emirates: dubai, abu dhabi; Qatar: doha; Turkey: istanbul;
    Israel: tel aviv, jerusalem; Egypt: cairo;
    United Kingdom: london, manchester, edinburgh; France: paris, lyon;
    Germany: berlin, munich, frankfurt, hamburg; Italy: rome, milan, venice, florence;
    Spain: madrid, barcelona; Portugal: lisbon, porto; Netherlands: amsterdam;
    Belgium: brussels; Switzerland: zurich, geneva; Austria: vienna;
    Czech Republic: prague; Hungary: budapest; Poland: warsaw; Denmark: copenhagen;
    Sweden: stockholm; Norway: oslo; Finland: helsinki; Ireland: dublin; Greece: athens;
    Iceland: reykjavik; Russia: moscow;
    United States: new york, new york city, nyc, los angeles, san francisco, seattle,
    chicago, boston, washington dc, miami, las vegas, honolulu, hawaii, austin,
    denver, atlanta, dallas, houston, san diego, philadelphia, orlando, guam;
    Canada: toronto, vancouver, montreal; Mexico: mexico city, cancun;
    Brazil: sao paulo, rio de janeiro; Argentina: buenos aires; Peru: lima;
    Australia: sydney, melbourne, brisbane; New Zealand: auckland;
    South Africa: cape town, johannesburg; Kenya: nairobi; Morocco: marrakech""",
    canonical_is_alias=False,
)
COUNTRIES = table(
    """Japan:; South Korea: korea; China:; Taiwan:; Thailand:; Vietnam:;
    Philippines: the philippines; Malaysia:; Indonesia:; India:;
    United Arab Emirates: uae; Turkey: türkiye; Israel:; Egypt:;
    United Kingdom: uk, u.k., england, scotland, britain; France:; Germany:; Italy:; Spain:;
    Portugal:; Netherlands: the netherlands, holland; Belgium:; Switzerland:; Austria:;
    Greece:; Ireland:; Iceland:; Norway:; Sweden:; Denmark:; Finland:; Poland:;
    Czech Republic: czechia; Hungary:; Russia:; United States: us, u.s., usa, u.s.a., america;
    Canada:; Mexico:; Brazil:; Argentina:; Peru:; Chile:; Australia:; New Zealand:;
    South Africa:; Kenya:; Morocco:; Singapore:; Qatar:"""
)
DEMONYMS = table(
    """United States: us, u.s., american; South Korea: korean; United Kingdom: british, uk;
    Canada: canadian; China: chinese; Japan: japanese; India: indian; Germany: german;
    France: french; Australia: australian; Mexico: mexican; Ireland: irish; Italy: italian;
    Spain: spanish; Brazil: brazilian"""
)

# words that look like names (capitalized) but are not people or places
NOT_NAMES = frozenset(
    """I My The This That These Those He She It They We You Who What Where When Why How There
    Here And But So Or If Then Also Just Please Thanks Thank Yes No Ok Okay Hi Hey Hello Well
    Today Tomorrow Tonight Yesterday Monday Tuesday Wednesday Thursday Friday Saturday Sunday
    January February March April May June July August September October November December
    God Sir Madam Everyone Nobody Someone Anyone All Both Each Our Your His Her Their Its Is
    Was In On At For To From With As By Of An A Let Can Could Would Should Will Do Does Did
    Has Have Had Not Next Last Mom Dad Mum Christmas Easter Thanksgiving Halloween English
    Korean Chinese Japanese French Spanish Now Soon Actually Maybe Sure Great Sorry""".split()
)

# neighbourhoods and districts -> their city: "my flat is in Pudong" refines "Shanghai"
DISTRICTS = table(
    """Shanghai: pudong, puxi, jing'an, jingan, xuhui, huangpu, changning, minhang, hongkou;
    Beijing: chaoyang, haidian, dongcheng, xicheng, sanlitun, wangjing;
    New York: brooklyn, manhattan, queens, the bronx, bronx, harlem, williamsburg, soho,
    tribeca, chelsea, astoria, bushwick, upper west side, upper east side, east village;
    London: camden, hackney, shoreditch, islington, brixton, clapham, peckham, notting hill,
    kensington, greenwich, canary wharf, soho london, stratford, wimbledon;
    Seoul: gangnam, hongdae, itaewon, mapo, jamsil, seocho, songpa, yeouido, jongno, seongsu;
    Tokyo: shibuya, shinjuku, roppongi, ginza, asakusa, meguro, setagaya, ikebukuro, nakameguro;
    Berlin: kreuzberg, mitte, neukolln, neukölln, prenzlauer berg, friedrichshain,
    charlottenburg; Paris: le marais, marais, montmartre, belleville, bastille;
    San Francisco: the mission, mission district, soma, castro, nob hill, haight-ashbury;
    Los Angeles: silver lake, echo park, santa monica, venice beach, hollywood, koreatown;
    Hong Kong: kowloon, wan chai, causeway bay, mong kok, central;
    Singapore: tiong bahru, orchard, bukit timah; Bangkok: sukhumvit, silom, thonglor;
    Paris: saint-germain; Amsterdam: de pijp, jordaan""",
    canonical_is_alias=False,
)
# words that follow "I'm" at a sentence start but name no person
NOT_GIVEN_NAMES = frozenset(
    """fine good great ok okay sorry tired happy sad busy back here home ready done sure
    glad excited new so just not also still really very sick hungry bored lost stuck
    christian catholic jewish muslim buddhist hindu atheist vegan vegetarian single married
    divorced retired pregnant american british english canadian australian korean japanese
    chinese french german spanish italian indian mexican brazilian russian dutch swiss
    swedish irish scottish european asian african latino gay straight bi late early
    monday tuesday wednesday thursday friday saturday sunday thai filipino vietnamese
    indonesian turkish polish greek portuguese egyptian nigerian kenyan israeli iranian
    pakistani argentinian chilean colombian peruvian ukrainian norwegian danish finnish
    austrian belgian czech hungarian romanian singaporean malaysian taiwanese mongolian
    latina latino hispanic native asian-american bilingual mormon protestant agnostic sikh
    left-handed right-handed allergic available unemployed homeless freelance remote""".split()
)
# endings of words that name a people or a language, not a person ("Vietnamese", "Swedish")
NOT_NAME_ENDINGS = ("ese", "ish")
# what a switched-to (or given-up) item is a preference of: "from coffee to green tea" → drink
PREFERENCE_TOPICS = table(
    """drink: coffee, tea, green tea, black tea, herbal tea, matcha, espresso, latte, decaf,
    decaf coffee, cold brew, beer, wine, red wine, white wine, soda, coke, diet coke, juice,
    kombucha, water, sparkling water, hot chocolate, 커피, 녹차, 홍차, 보리차, 맥주, 와인,
    탄산음료, 주스, 물, 디카페인; milk: oat milk, almond milk, soy milk, whole milk,
    skim milk, lactose-free milk, 두유, 귀리 우유; commute: bike, bicycle, cycling,
    public transport, subway, metro, bus, train, walking, scooter, carpool, 자전거, 지하철,
    버스; editor: vim, neovim, emacs, vs code, vscode, sublime, intellij, pycharm, cursor;
    operating_system: linux, ubuntu, windows, macos, mac; browser: chrome, firefox, safari,
    edge, brave, arc; phone: iphone, android, pixel, galaxy, 아이폰, 갤럭시; sport: running,
    jogging, swimming, climbing, bouldering, yoga, pilates, tennis, football, soccer,
    basketball, volleyball, badminton, golf, hiking, skiing, snowboarding, surfing, boxing,
    rowing, crossfit, dancing, 수영, 러닝, 조깅, 등산, 요가, 필라테스, 테니스, 클라이밍""",
    canonical_is_alias=False,
)

# languages a user may be learning (``madeleine.facts.rules.learning``)
ENGLISH_LANGUAGES = (
    "English Spanish French German Italian Portuguese Japanese Korean Chinese Mandarin"
    " Cantonese Russian Arabic Hindi Dutch Swedish Norwegian Danish Finnish Polish Greek"
    " Turkish Hebrew Vietnamese Thai Indonesian Tagalog Swahili Czech Ukrainian Latin"
    " ASL"
).split()
EN_LANGUAGE = "(?P<lang>" + "|".join(ENGLISH_LANGUAGES) + r")\b"
